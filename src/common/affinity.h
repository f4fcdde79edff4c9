// CPU cores for the timed processes and for the builds: the lanes' processes (judge, zygote and
// the candidates it forks) get cores of their own while compilers run on the rest, so a timed
// call's host side is never queued behind nvcc.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace kf {

struct CpuSplit {
  std::vector<std::vector<int>> lanes;  // per lane, its reserved CPUs; empty: no split
  std::vector<int> builds;              // the CPUs builds may use; empty: no split
};

// Reserves `per_lane` of `cpus` (the ones this process may use, in order) for each of `lanes`
// lanes, from the end, when at least `min_left` remain for builds; otherwise no split (a small
// machine keeps every core for both, as before).
CpuSplit SplitCpus(const std::vector<int>& cpus, int lanes, int per_lane = 2, int min_left = 4);

// The CPUs this process may run on (sched_getaffinity).
std::vector<int> AllowedCpus();

// Confines process `pid` (and the children it forks afterwards) to `cpus`; nothing for none.
Status PinProcess(pid_t pid, const std::vector<int>& cpus);

}  // namespace kf
