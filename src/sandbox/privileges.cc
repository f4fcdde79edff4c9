// An own /proc and no capabilities.
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "sandbox/steps.h"

namespace kf::sandbox {

std::string MountOwnProc() {
  if (unshare(CLONE_NEWNS) != 0) return Errno("unshare(CLONE_NEWNS)");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return Errno("making / private");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return Errno("mounting /proc");
  return "";
}

std::string DropCapabilities() {
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return Errno("clearing ambient capabilities");
  // The bounding set caps what an exec'd root program (a compiler) gets back.
  for (int cap = 0; cap <= 63; ++cap) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the last capability this kernel knows
      // Without CAP_SETPCAP we hold no capabilities to lose; no_new_privs keeps it so.
      if (errno == EPERM && geteuid() != 0) break;
      return Errno("PR_CAPBSET_DROP " + std::to_string(cap));
    }
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capset, &header, data) != 0) return Errno("capset");
  return "";
}

}  // namespace kf::sandbox
