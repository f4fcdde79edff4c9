// Timing policy: how many timed calls to make and when to stop, decided here in the
// supervisor from the samples so far. The candidate process only runs the batches it is asked
// for (in compiled code), so it can neither choose its sample count nor stop early.
#pragma once

#include <string>
#include <vector>

namespace kf::execute {

struct TimingOptions {
  int warmup_iters = 3;          // untimed calls first: module load, caches, lazy init
  int min_samples = 10;          // never summarise fewer
  int max_samples = 300;         // enough for a stable median of a noisy kernel
  double target_spread = 0.05;   // stop once (p75 - p25) / median is below this
  double budget_ms = 2000;       // or once this much sampled time is spent
  double batch_target_ms = 50;   // size batches to about this much work each
  int pool = 3;                  // input sets in rotation (fresh inputs every iteration)
};

struct Summary {
  double median_ms = 0;
  double p10_ms = 0;
  double p25_ms = 0;
  double p75_ms = 0;
  double p90_ms = 0;
  int n = 0;
};

// Quantiles by linear interpolation between order statistics.
Summary Summarize(std::vector<double> samples);
// The 0th, (100/steps)th, ..., 100th percentiles (steps + 1 values; none for no samples): the
// shape of a timing distribution in a few numbers (the verdict's timing.quantiles_ms).
std::vector<double> Quantiles(std::vector<double> samples, int steps);

// The stopping rule. Next() says how many calls the next batch should make; 0 means stop,
// with reason() saying why ("stable", "budget", "max_samples").
class StoppingRule {
 public:
  explicit StoppingRule(TimingOptions opt) : opt_(opt) {}
  int Next(const std::vector<double>& samples_ms);
  const std::string& reason() const { return reason_; }

 private:
  TimingOptions opt_;
  std::string reason_;
};

}  // namespace kf::execute
