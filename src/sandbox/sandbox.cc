// The C ABI: enter the sandbox, probe what the kernel supports.
#include "sandbox/sandbox.h"

#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "sandbox/policy.h"
#include "sandbox/steps.h"

namespace kf::sandbox {
namespace {

void Copy(const std::string& text, char* out, size_t len) {
  if (!out || len == 0) return;
  size_t n = std::min(text.size(), len - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// Runs the steps; returns "" and a summary, or the failing step's reason.
std::string Enter(const Policy& p, std::string* summary) {
  std::vector<std::string> done;
  if (auto e = ApplyLimits(p); !e.empty()) return e;
  done.push_back("rlimits");
  if (!p.network) {
    if (auto e = EnterNetNamespace(); !e.empty()) return e;
    done.push_back("no network");
  }
  bool own_pidns = false;
  if (p.new_pid_namespace) {
    std::string bound;
    if (auto e = EnterPidNamespace(p, &bound); !e.empty()) return e;
    own_pidns = true;
    done.push_back("pid namespace (" + bound + ")");
  }
  // A fresh /proc only makes sense in our own pid namespace; non-root callers may be refused
  // by the kernel, which the summary then says.
  if (own_pidns && p.own_proc) {
    if (auto e = MountOwnProc(); e.empty()) {
      done.push_back("own /proc");
    } else if (geteuid() == 0) {
      return e;
    }
  }
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return Errno("PR_SET_DUMPABLE");
  int abi = LandlockAbi();
  std::string fs = p.filesystem;
  if (fs == "auto") fs = abi > 0 ? "landlock" : geteuid() == 0 ? "mount" : "none";
  if (fs == "landlock") {
    if (abi == 0) return "Landlock is not available on this kernel";
  } else if (fs == "mount") {
    if (auto e = ApplyReadOnlyMounts(p); !e.empty()) return e;
    done.push_back("read-only mounts");
  }
  if (p.drop_capabilities) {
    if (auto e = DropCapabilities(); !e.empty()) return e;
    done.push_back("no capabilities");
  }
  // Landlock after the mounts (it forbids mount changes) and after dropping capabilities.
  if (fs == "landlock") {
    if (auto e = ApplyLandlock(p, abi); !e.empty()) return e;
    done.push_back("landlock v" + std::to_string(abi));
  }
  if (fs == "none") done.push_back("filesystem NOT confined");
  if (p.seccomp) {
    if (auto e = ApplySeccomp(); !e.empty()) return e;
    done.push_back("seccomp");
  }
  for (size_t i = 0; i < done.size(); ++i) *summary += (i ? ", " : "") + done[i];
  return "";
}

// Whether a forked child can unshare `flags` (the probe must not change the caller).
bool CanUnshare(int flags) {
  pid_t pid = fork();
  if (pid == 0) _exit(unshare(flags) == 0 ? 0 : 1);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace
}  // namespace kf::sandbox

extern "C" int kforge_sandbox_enter(const char* policy_json, char* err, size_t err_len) {
  using namespace kf::sandbox;
  try {
    Policy p;
    std::string e, summary;
    if (!ParsePolicy(policy_json, &p, &e)) {
      Copy(e, err, err_len);
      return -1;
    }
    e = Enter(p, &summary);
    Copy(e.empty() ? summary : e, err, err_len);
    return e.empty() ? 0 : -1;
  } catch (...) {  // nothing may cross the C ABI
    Copy("sandbox: unexpected internal error", err, err_len);
    return -1;
  }
}

extern "C" int kforge_sandbox_probe(char* out, size_t out_len) {
  using namespace kf::sandbox;
  try {
    bool root = geteuid() == 0;
    int user_flag = root ? 0 : CLONE_NEWUSER;
    nlohmann::json j;
    j["root"] = root;
    utsname u{};
    j["kernel"] = uname(&u) == 0 ? u.release : "";
    j["landlock_abi"] = LandlockAbi();
    j["user_namespace"] = CanUnshare(CLONE_NEWUSER);
    j["net_namespace"] = CanUnshare(user_flag | CLONE_NEWNET);
    j["pid_namespace"] = CanUnshare(user_flag | CLONE_NEWPID);
    j["mount_namespace"] = CanUnshare(user_flag | CLONE_NEWNS);
    uint32_t action = SECCOMP_RET_ERRNO;
    j["seccomp"] = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
    j["pid_max_per_namespace"] = KernelVersion() >= 6014;
    j["filesystem"] = j["landlock_abi"].get<int>() > 0             ? "landlock"
                      : (root && j["mount_namespace"].get<bool>()) ? "read-only mounts"
                                                                   : "not confined";
    j["processes"] = j["pid_max_per_namespace"].get<bool>() ? "bounded by pid_max"
                     : root ? "unbounded until killed (root ignores RLIMIT_NPROC)"
                            : "bounded by RLIMIT_NPROC";
    std::string text = j.dump();
    if (!out || text.size() + 1 > out_len) return -1;
    Copy(text, out, out_len);
    return 0;
  } catch (...) {
    return -1;
  }
}
