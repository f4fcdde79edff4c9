#include "common/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <thread>

extern char** environ;

namespace kf {

std::string ExitInfo::Describe() const {
  if (exited) return "exit code " + std::to_string(exit_code);
  return "signal " + std::to_string(term_signal) + " (" + strsignal(term_signal) + ")";
}

ExitInfo ExitInfoFromWaitStatus(int status) {
  ExitInfo e;
  if (WIFEXITED(status)) {
    e.exited = true;
    e.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.term_signal = WTERMSIG(status);
  }
  return e;
}

Child& Child::operator=(Child&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0 && !exit_) Kill();
    pid_ = std::exchange(o.pid_, -1);
    exit_ = std::move(o.exit_);
  }
  return *this;
}

Child::~Child() {
  if (pid_ > 0 && !exit_) Kill();
}

bool Child::running() {
  if (pid_ <= 0 || exit_) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_ = ExitInfoFromWaitStatus(status);
    return false;
  }
  return r == 0;
}

std::optional<ExitInfo> Child::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto step = std::chrono::milliseconds(1);
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(step);
    step = std::min(step * 2, std::chrono::milliseconds(20));
  }
  return exit_;
}

ExitInfo Child::Kill() {
  if (pid_ <= 0) return {};
  if (!exit_) {
    ::kill(-pid_, SIGKILL);  // the group: helpers the child started die with it
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exit_ = ExitInfoFromWaitStatus(status);
  }
  return *exit_;
}

Status SocketPair(UniqueFd* a, UniqueFd* b) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Status::IoError(std::string("socketpair: ") + strerror(errno));
  }
  *a = UniqueFd(sv[0]);
  *b = UniqueFd(sv[1]);
  return Status::Ok();
}

namespace {

// Only async-signal-safe calls between fork and exec.
[[noreturn]] void ExecChild(const SpawnOptions& opt, const std::vector<char*>& argv,
                            const std::vector<char*>& envp, int err_pipe, pid_t parent) {
  setpgid(0, 0);
  auto fail = [&](const char* what) {
    int e = errno;
    (void)!write(err_pipe, what, strlen(what));
    (void)!write(err_pipe, ": ", 2);
    const char* s = strerror(e);
    (void)!write(err_pipe, s, strlen(s));
    _exit(127);
  };
  if (opt.die_with_parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail("prctl");
    // The parent died before prctl: the signal will never come.
    if (getppid() != parent) _exit(127);
  }
  if (opt.stdin_null) {
    int n = open("/dev/null", O_RDONLY);
    if (n >= 0) dup2(n, 0);
  }
  if (!opt.stdout_path.empty()) {
    int f = open(opt.stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (f < 0) fail("open stdout");
    dup2(f, 1);
  }
  if (!opt.stderr_path.empty()) {
    int f = open(opt.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (f < 0) fail("open stderr");
    dup2(f, 2);
  }
  // Move parent fds out of the way first so a mapping never clobbers a source still needed.
  int high[64];
  size_t n = opt.fds.size() < 64 ? opt.fds.size() : 64;
  for (size_t i = 0; i < n; ++i) {
    high[i] = fcntl(opt.fds[i].second, F_DUPFD, 200);
    if (high[i] < 0) fail("dup");
  }
  for (size_t i = 0; i < n; ++i) {
    if (dup2(high[i], opt.fds[i].first) < 0) fail("dup2");
  }
  // Close everything else above stderr that is not a mapped target.
  for (int fd = 3; fd < 1024; ++fd) {
    bool keep = fd == err_pipe;
    for (size_t i = 0; i < n; ++i) keep = keep || fd == opt.fds[i].first;
    if (!keep) close(fd);
  }
  if (!opt.cwd.empty() && chdir(opt.cwd.c_str()) != 0) fail("chdir");
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(argv[0], argv.data(), envp.data());
  fail("exec");
  _exit(127);
}

}  // namespace

std::string FindExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    std::string full = (dir.empty() ? "." : dir) + "/" + name;
    if (access(full.c_str(), X_OK) == 0) return full;
    start = end + 1;
  }
  return "";
}

Result<Child> Spawn(const SpawnOptions& opt_in) {
  if (opt_in.argv.empty()) return Status::Invalid("spawn: empty argv");
  SpawnOptions opt = opt_in;
  opt.argv[0] = FindExecutable(opt_in.argv[0]);
  if (opt.argv[0].empty()) return Status::Unavailable("cannot find " + opt_in.argv[0] + " on PATH");
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string s(*e);
    bool replaced = false;
    for (const auto& set : opt.env_set) {
      if (s.substr(0, s.find('=') + 1) == set.substr(0, set.find('=') + 1)) replaced = true;
    }
    if (!replaced) env.push_back(std::move(s));
  }
  for (const auto& set : opt.env_set) env.push_back(set);
  std::vector<char*> argv, envp;
  for (const auto& a : opt.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  int errp[2];
  if (pipe2(errp, O_CLOEXEC) != 0) return Status::IoError("pipe2 failed");
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(errp[0]);
    close(errp[1]);
    return Status::IoError(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) ExecChild(opt, argv, envp, errp[1], parent);
  close(errp[1]);
  setpgid(pid, pid);  // also from the parent, so a kill(-pid) right after spawn finds the group
  char buf[512];
  ssize_t got = read(errp[0], buf, sizeof buf - 1);
  close(errp[0]);
  Child child(pid);
  if (got > 0) {
    buf[got] = 0;
    child.Wait(std::chrono::milliseconds(1000));
    return Status::Unavailable("cannot start " + opt.argv[0] + ": " + buf);
  }
  return child;
}

double ProcessTreeCpuMs(pid_t root, const std::string& proc) {
  struct Times {
    pid_t ppid = 0;
    long long ticks = 0;  // utime + stime + cutime + cstime
  };
  std::map<pid_t, Times> all;
  DIR* d = opendir(proc.c_str());
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    std::ifstream f(proc + "/" + e->d_name + "/stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    // "pid (comm) state ppid ..."; comm may hold spaces and parentheses: read after the last ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream in(line.substr(close + 1));
    std::string field;
    std::vector<std::string> fields;  // from field 3 (state) on
    while (in >> field && fields.size() < 15) fields.push_back(field);
    if (fields.size() < 15) continue;
    Times t;
    t.ppid = static_cast<pid_t>(std::stol(fields[1]));
    for (int i = 11; i <= 14; ++i) t.ticks += std::stoll(fields[static_cast<size_t>(i)]);
    all[static_cast<pid_t>(pid)] = t;
  }
  closedir(d);
  if (all.count(root) == 0) return 0;
  long long ticks = 0;
  for (const auto& [pid, t] : all) {
    for (pid_t p = pid; p > 1; p = all.count(p) ? all[p].ppid : 0) {
      if (p != root) continue;
      ticks += t.ticks;
      break;
    }
  }
  return 1000.0 * static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace kf
