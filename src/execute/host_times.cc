#include "execute/host_times.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "common/files.h"

namespace kf::execute {
namespace {

// A /proc file's text; "" once the process or thread is gone (which callers allow for).
std::string ProcText(const std::string& path) {
  auto text = ReadFile(path);
  return text.ok() ? *text : std::string();
}

// The fields of /proc/<pid>/stat after the command name (which may hold spaces and brackets):
// [0] is the state, [1] the parent pid, [11] utime and [12] stime in clock ticks.
std::vector<std::string> StatFields(pid_t pid) {
  std::string text = ProcText("/proc/" + std::to_string(pid) + "/stat");
  auto close = text.rfind(')');
  std::vector<std::string> out;
  if (close == std::string::npos) return out;
  std::istringstream in(text.substr(close + 1));
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    auto f = StatFields(static_cast<pid_t>(pid));
    if (f.size() > 1 && std::atol(f[1].c_str()) == parent) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(d);
  return out;
}

}  // namespace

pid_t HostOf(pid_t pid) {
  auto children = ChildrenOf(pid);
  return children.size() == 1 ? children[0] : pid;
}

bool HasChildren(pid_t pid) { return !ChildrenOf(pid).empty(); }

HostTimes ReadHostTimes(pid_t pid) {
  HostTimes t;
  const std::string dir = "/proc/" + std::to_string(pid);
  // schedstat: nanoseconds on a CPU, nanoseconds waiting on a run queue, timeslices.
  std::istringstream sched(ProcText(dir + "/task/" + std::to_string(pid) + "/schedstat"));
  long long cpu_ns = 0, wait_ns = 0;
  auto f = StatFields(pid);
  if (!(sched >> cpu_ns >> wait_ns) || f.size() < 13) return t;
  static const double tick_ms = 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  t.ok = true;
  t.thread_cpu_ms = static_cast<double>(cpu_ns) / 1e6;
  t.thread_wait_ms = static_cast<double>(wait_ns) / 1e6;
  t.process_cpu_ms = static_cast<double>(std::atoll(f[11].c_str()) + std::atoll(f[12].c_str())) * tick_ms;
  return t;
}

HostTimes operator-(const HostTimes& after, const HostTimes& before) {
  HostTimes d;
  d.ok = after.ok && before.ok;
  if (!d.ok) return d;
  d.thread_cpu_ms = after.thread_cpu_ms - before.thread_cpu_ms;
  d.thread_wait_ms = after.thread_wait_ms - before.thread_wait_ms;
  d.process_cpu_ms = after.process_cpu_ms - before.process_cpu_ms;
  return d;
}

HostTimes& operator+=(HostTimes& sum, const HostTimes& d) {
  sum.ok = sum.ok && d.ok;
  sum.thread_cpu_ms += d.thread_cpu_ms;
  sum.thread_wait_ms += d.thread_wait_ms;
  sum.process_cpu_ms += d.process_cpu_ms;
  return sum;
}

}  // namespace kf::execute
