// Timing policy: how many timed calls to make and when to stop, decided here in the
// supervisor from the samples so far. The candidate process only runs the batches it is asked
// for (in compiled code), so it can neither choose its sample count nor stop early.
#pragma once

#include <optional>
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

// The GPU sleep (microseconds) to put before each timed call's start event, from the host times
// of the warm-up calls (ms): long enough that the host has queued the call's kernels before the
// GPU reaches the start event, so the interval holds the GPU's work and not the Python and
// launch latency of getting there (the cache flush before it covers tens of microseconds more).
// 1.5x the median host time plus 10 us, rounded up to 25 us x 2^k, at most kMaxDelayUs; 25 us
// when there are no host times. A call that waits for the GPU itself (a synchronising forward)
// is not helped by a longer sleep: the cap bounds what that costs.
inline constexpr double kMaxDelayUs = 12800;
double ChooseDelayUs(const std::vector<double>& host_ms);
// ChooseDelayUs of warm-up calls' host times: the first call pays for lazy initialisation, so
// the later ones say what a call costs (all of them when there is only one).
double WarmupDelayUs(const std::vector<double>& warm_host_ms);

// An interval for a ratio of medians, median(base) / median(cand): the 2.5th and 97.5th
// percentiles of the ratio over `resamples` bootstrap resamples of both sample sets (each
// resampled with replacement, independently). Deterministic: the same samples give the same
// interval. nullopt when either set has fewer than 5 samples or a median is not positive.
struct Interval {
  double lo = 0;
  double hi = 0;
};
std::optional<Interval> RatioInterval(const std::vector<double>& base_ms,
                                      const std::vector<double>& cand_ms, int resamples = 2000);

// Why a baseline measurement must not be stored for later verdicts ("" when it may be): its
// spread, (p75 - p25) / median, above `max_spread` after the stopping rule gave up; its host
// waiting for a CPU more than a quarter of the batches' wall time; or (on a GPU) fewer than
// half its calls with the host's latency hidden.
struct BaselineFacts {
  Summary summary;
  std::string stop_reason;
  double wait_ms = 0;       // the judge's main thread, runnable and waiting for a CPU
  double wall_ms = 0;       // the batches' wall time
  double hidden_fraction = 1;
  bool gpu = false;
};
std::string BaselineDisturbed(const BaselineFacts& f, double max_spread = 0.25);

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
