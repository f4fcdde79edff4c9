// Resource limits, no_new_privs, and the network namespace.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/fd.h"
#include "sandbox/steps.h"

namespace kf::sandbox {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

int KernelVersion() {
  utsname u{};
  if (uname(&u) != 0) return 0;
  int major = 0, minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return 0;
  return major * 1000 + minor;
}

namespace {

// Lowers a limit to `value`; never raises the hard limit (that needs privileges and is not ours).
std::string Limit(int resource, const char* name, rlim_t soft, rlim_t hard) {
  rlimit cur{};
  if (getrlimit(resource, &cur) != 0) return Errno(std::string("getrlimit ") + name);
  if (cur.rlim_max != RLIM_INFINITY && hard > cur.rlim_max) hard = cur.rlim_max;
  if (soft > hard) soft = hard;
  rlimit next{soft, hard};
  if (setrlimit(resource, &next) != 0) return Errno(std::string("setrlimit ") + name);
  return "";
}

bool WriteFile(const char* path, const std::string& text) {
  UniqueFd fd(open(path, O_WRONLY | O_CLOEXEC));
  return fd.valid() && write(fd.get(), text.data(), text.size()) == ssize_t(text.size());
}

}  // namespace

std::string ApplyLimits(const Policy& p) {
  std::string e = Limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0);
  if (e.empty() && p.max_file_bytes > 0)
    e = Limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", p.max_file_bytes, p.max_file_bytes);
  // The soft limit sends SIGXCPU (which a handler could catch); the hard one kills 5 s later.
  if (e.empty() && p.cpu_seconds > 0)
    e = Limit(RLIMIT_CPU, "RLIMIT_CPU", p.cpu_seconds, p.cpu_seconds + 5);
  if (e.empty() && p.max_open_files > 0)
    e = Limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", p.max_open_files, p.max_open_files);
  // Root ignores RLIMIT_NPROC; for others it is a real bound on processes of this uid.
  if (e.empty() && p.max_processes > 0 && getuid() != 0)
    e = Limit(RLIMIT_NPROC, "RLIMIT_NPROC", p.max_processes, p.max_processes);
  if (!e.empty()) return e;
  // Exceeding RLIMIT_FSIZE must be an EFBIG the code sees, not a silent SIGXFSZ death.
  if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR) return Errno("signal(SIGXFSZ)");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Errno("PR_SET_NO_NEW_PRIVS");
  return "";
}

std::string EnterNetNamespace() {
  if (geteuid() == 0) {
    if (unshare(CLONE_NEWNET) != 0) return Errno("unshare(CLONE_NEWNET)");
    return "";
  }
  // Unprivileged: a user namespace first. Map our own ids so files we own stay ours.
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
    return Errno("unshare(CLONE_NEWUSER|CLONE_NEWNET)");
  if (!WriteFile("/proc/self/setgroups", "deny") ||
      !WriteFile("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") ||
      !WriteFile("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1"))
    return Errno("writing the user namespace's id maps");
  return "";
}

}  // namespace kf::sandbox
