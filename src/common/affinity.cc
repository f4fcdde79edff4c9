#include "common/affinity.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace kf {

CpuSplit SplitCpus(const std::vector<int>& cpus, int lanes, int per_lane, int min_left) {
  CpuSplit s;
  const int n = static_cast<int>(cpus.size());
  if (lanes <= 0 || per_lane <= 0 || n - lanes * per_lane < min_left) return s;
  int next = n;
  for (int l = 0; l < lanes; ++l) {
    std::vector<int> mine(cpus.begin() + (next - per_lane), cpus.begin() + next);
    next -= per_lane;
    s.lanes.push_back(std::move(mine));
  }
  s.builds.assign(cpus.begin(), cpus.begin() + next);
  return s;
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

Status PinProcess(pid_t pid, const std::vector<int>& cpus) {
  if (cpus.empty()) return Status::Ok();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  if (sched_setaffinity(pid, sizeof(set), &set) != 0)
    return Status::Internal(std::string("sched_setaffinity: ") + std::strerror(errno));
  return Status::Ok();
}

}  // namespace kf
