// The pid namespace and the relay process that stands in for it outside.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/fd.h"
#include "sandbox/steps.h"

namespace kf::sandbox {
namespace {

pid_t g_child = -1;

// Init of a pid namespace ignores signals it has no handler for, SIGKILL aside, so a polite
// request to the relay becomes a kill of the whole namespace.
void KillChild(int) {
  if (g_child > 0) kill(g_child, SIGKILL);
}

// Closes every descriptor but `keep`, so the supervisor sees the channel close exactly when
// the confined process ends rather than when the relay does.
void CloseAllBut(int keep) {
  if (keep > 3) syscall(SYS_close_range, 3u, unsigned(keep - 1), 0u);
  syscall(SYS_close_range, unsigned(keep + 1), ~0u, 0u);
}

[[noreturn]] void Relay(pid_t child, int keep_fd) {
  g_child = child;
  CloseAllBut(keep_fd);
  struct sigaction sa {};
  sa.sa_handler = KillChild;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaction(sig, &sa, nullptr);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) _exit(70);
  }
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  // Die of the same signal so whoever reaps us reports "signal 11" for a segfault.
  int sig = WTERMSIG(status);
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  kill(getpid(), sig);
  _exit(128 + sig);
}

// A namespace's own pid_max (Linux >= 6.14) bounds processes and threads in it, root included.
// On older kernels the same file is the global limit: never write it there.
bool BoundPids(int64_t max_processes) {
  if (max_processes <= 0 || KernelVersion() < 6014) return false;
  // The kernel refuses values at or below its reserved pids (300).
  std::string text = std::to_string(max_processes < 301 ? 301 : max_processes + 1);
  UniqueFd fd(open("/proc/sys/kernel/pid_max", O_WRONLY | O_CLOEXEC));
  return fd.valid() && write(fd.get(), text.data(), text.size()) == ssize_t(text.size());
}

}  // namespace

std::string EnterPidNamespace(const Policy& p, std::string* bound) {
  if (unshare(CLONE_NEWPID) != 0) return Errno("unshare(CLONE_NEWPID)");
  int fds[2];
  // The relay holds the write end; the child sees a hang-up if the relay died before the child
  // could ask for PDEATHSIG.
  if (pipe2(fds, O_CLOEXEC) != 0) return Errno("pipe2");
  UniqueFd rd(fds[0]), wr(fds[1]);
  pid_t pid = fork();
  if (pid < 0) return Errno("fork into the pid namespace");
  if (pid > 0) Relay(pid, wr.get());
  wr.Reset();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return Errno("PR_SET_PDEATHSIG");
  pollfd pfd{rd.get(), POLLIN, 0};
  if (poll(&pfd, 1, 0) != 0) _exit(70);  // the relay is already gone
  std::string how;
  if (BoundPids(p.max_processes)) how = "pid_max " + std::to_string(p.max_processes);
  if (getuid() != 0 && p.max_processes > 0) {
    how += (how.empty() ? "" : ", ");
    how += "RLIMIT_NPROC " + std::to_string(p.max_processes);
  }
  *bound = how.empty() ? "count unbounded until killed" : how;
  return "";
}

}  // namespace kf::sandbox
