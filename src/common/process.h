// Child processes: spawn with a chosen set of inherited descriptors, kill, wait with a time
// limit. RAII: a Child that goes out of scope kills its whole process group and reaps it, so no
// path through the code leaves a stray runner process behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/fd.h"
#include "common/status.h"

namespace kf {

struct SpawnOptions {
  std::vector<std::string> argv;
  // (fd in the child, fd in the parent): dup2'ed before exec; every other descriptor except
  // 0/1/2 is closed in the child.
  std::vector<std::pair<int, int>> fds;
  std::vector<std::string> env_set;  // "NAME=value" entries added to (or replacing in) environ
  std::string cwd;                   // empty: inherit
  std::string stdout_path;           // empty: inherit; else appended to (created 0600)
  std::string stderr_path;           // empty: inherit; else appended to
  bool stdin_null = true;
  // SIGKILL the child (and only it: not its process group) when the thread that spawned it
  // ends, the whole process dying included (PR_SET_PDEATHSIG). Only for a child spawned from a
  // thread that lives as long as the child should, e.g. a command's main thread: a command
  // killed outright runs no destructor, and a busy child would otherwise outlive it.
  bool die_with_parent = false;
};

// How a process ended.
struct ExitInfo {
  bool exited = false;  // true: exit_code is valid; false: term_signal is valid
  int exit_code = 0;
  int term_signal = 0;
  std::string Describe() const;  // "exit code 3", "signal 11 (Segmentation fault)"
};
ExitInfo ExitInfoFromWaitStatus(int status);

class Child {
 public:
  Child() = default;
  explicit Child(pid_t pid) : pid_(pid) {}
  Child(Child&& o) noexcept : pid_(std::exchange(o.pid_, -1)), exit_(std::move(o.exit_)) {}
  Child& operator=(Child&& o) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();

  pid_t pid() const { return pid_; }
  bool running();  // reaps it if it has ended
  // Waits up to timeout for the process to end; nullopt if it is still running.
  std::optional<ExitInfo> Wait(std::chrono::milliseconds timeout);
  // SIGKILL to the process group, then reap.
  ExitInfo Kill();
  const std::optional<ExitInfo>& exit_info() const { return exit_; }

 private:
  pid_t pid_ = -1;
  std::optional<ExitInfo> exit_;
};

// argv[0] is looked up on PATH when it has no '/'.
Result<Child> Spawn(const SpawnOptions& opt);
// The full path of an executable on PATH; empty when there is none.
std::string FindExecutable(const std::string& name);

// CPU time (user + system, ms) that process `root` and every process descended from it have
// used, the children they reaped included, read from `proc`'s <pid>/stat files. Two samples
// apart tell how much a tree of compilers worked in between. 0 when `root` is gone.
double ProcessTreeCpuMs(pid_t root, const std::string& proc = "/proc");

// A connected AF_UNIX stream socket pair, both ends close-on-exec.
Status SocketPair(UniqueFd* a, UniqueFd* b);

}  // namespace kf
