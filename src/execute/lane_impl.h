// Lane internals shared by lane.cc (processes, problems, baselines) and run.cc (one
// candidate's run). Internal to execute.
#pragma once

#include <map>

#include <functional>
#include <random>

#include "execute/execute.h"
#include "execute/runner_proc.h"

namespace kf::execute {

// One timed batch: asked for `iters` calls starting at rotation index `first`; fills the
// samples (device ms per call) or fails.
using BatchFn = std::function<Status(int first, int iters, std::vector<double>* device_ms)>;

// Warm-up, then batches until the stopping rule says stop. Returns samples and the wall time
// measured here around the timed batches.
Result<TimingResult> DriveTiming(const TimingOptions& opt, const BatchFn& batch);

class Lane::Impl {
 public:
  LaneOptions opt;
  RunnerProc judge;
  RunnerProc zygote;
  DeviceInfo device;
  bool ready = false;
  int spawned = 0;
  // The judge's measured cost of an empty timed call given fresh inputs, by problem: the
  // inputs' size sets what rewriting them costs.
  std::map<std::string, double> noop_ms_per_call;

  std::string DeviceName() const {
    return opt.backend == "cuda" ? "cuda:" + std::to_string(opt.device_index) : "cpu";
  }
  // Fills pool slots T0..T(P-1) with inputs drawn from `seed`; returns their descriptors.
  Result<std::vector<nlohmann::json>> PreparePool(const std::string& problem, int pool,
                                                  uint64_t seed);
  // `fresh` measures again now (the machine's load may have changed) without replacing the
  // first measurement, which later candidates keep using.
  Result<double> NoopCost(const std::string& problem, int pool, uint64_t perturb_seed,
                          bool fresh = false);
  ExecResult RunCandidate(const std::string& problem_id, const ProblemInfo& problem,
                          const std::string& code, const LoadInlineFn& load_inline,
                          const ExecOptions& opt);
};

std::vector<std::string> PoolNames(int pool);

}  // namespace kf::execute
