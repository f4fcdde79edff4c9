// bench metrics: Pass@k, Avg@k, Faster Rate, fast_p, geometric-mean speedup, status counts;
// overall, per level, per kernel family (load_inline, triton) and per problem. Pure functions of the samples' outcomes (no I/O), so
// the definitions below are the whole story (docs/CLI.md repeats them for users).
//
// Definitions (n = a problem's counted samples, c = those with status ok):
//  - Pass@k per problem: 1 - C(n-c, k')/C(n, k') with k' = min(k, n) (a problem with fewer
//    samples than k is scored with all it has); overall/per level: the mean over problems.
//  - Avg@k per problem: c/n (the expected fraction passing among k samples drawn from the n);
//    overall/per level: the mean over problems.
//  - Faster Rate vs eager (vs torch.compile): over all counted samples, the fraction with status
//    ok (correct and legal) and speedup > faster_threshold (1.1). Absent (unavailable) vs
//    compile when no counted sample has a torch.compile speedup (e.g. CPU torch 1.13).
//  - fast_p (KernelBench's definition, vs eager): over all counted samples, the fraction with
//    status ok and speedup > p; fast_0 is the correctness rate (ok samples without a speedup,
//    as with --no-baselines, count for p = 0 only).
//  - With significance (the default), "speedup > t" in Faster Rate and fast_p means the lower
//    end of the speedup's 95% interval is above t (verdicts without an interval: the speedup).
//  - Geometric-mean speedup vs eager (vs compile): over ok samples that have one; absent if none.
//  - Per family: the same definitions over the samples of one family alone (a problem counts
//    for a family when it has samples of that family).
//  - infra_error samples say nothing about the model: they are not counted in n (nor in any
//    rate); they are reported in the status counts and as `infra_errors`. A problem whose
//    samples are all infra_error has n = 0 and is left out of the means over problems.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "score/verdict.h"

namespace kf::bench {

struct Sample {
  std::string level;    // "level1"; problems outside a level folder use their folder's name
  std::string problem;  // the problem's id, unique within the level
  VerdictStatus status = VerdictStatus::kInfraError;
  std::optional<double> speedup_vs_eager;
  std::optional<double> speedup_vs_compile;
  // The candidate's kernel family (backend::FamilyName: "load_inline", "triton"); "" when
  // unknown (per_family then leaves the sample out).
  std::string family;
  // The lower ends of the speedups' 95% intervals (verdict format 8 on); absent before.
  std::optional<double> speedup_vs_eager_lo = std::nullopt;
  std::optional<double> speedup_vs_compile_lo = std::nullopt;
};

struct MetricOptions {
  int k = 1;
  double faster_threshold = 1.1;  // DESIGN.md's Faster Rate: more than 1.1x faster
  std::vector<double> fast_p = {0, 0.5, 0.8, 1, 1.5, 2};
  // A sample counts as faster than a threshold only when its speedup's interval lies above it
  // (its lower end; the point estimate where a verdict has no interval). false: the point
  // estimate always (`--no-significance`, for comparisons with earlier runs).
  bool significance = true;
};

struct ProblemMetrics {
  std::string level, problem;
  int n = 0;  // counted samples (infra_error excluded)
  int c = 0;  // status ok
  int k_used = 0;
  double pass_at_k = 0, pass_at_1 = 0, avg_at_k = 0;
  std::optional<double> best_speedup_vs_eager, geomean_speedup_vs_eager;
  std::map<std::string, int> status_counts;  // all samples, infra_error included
};

struct Aggregate {
  int problems = 0;  // with n > 0
  int samples = 0;   // counted
  int correct = 0;
  int infra_errors = 0;
  double pass_at_k = 0, pass_at_1 = 0, avg_at_k = 0;
  double faster_rate_vs_eager = 0;
  std::optional<double> faster_rate_vs_compile;
  std::vector<std::pair<double, double>> fast_p;  // (p, fraction), vs eager
  std::optional<double> geomean_speedup_vs_eager, geomean_speedup_vs_compile;
  std::map<std::string, int> status_counts;
};

struct Metrics {
  MetricOptions options;
  Aggregate overall;
  std::map<std::string, Aggregate> per_level;
  std::map<std::string, Aggregate> per_family;  // by Sample::family; empty when none is known
  std::vector<ProblemMetrics> problems;  // sorted by level, then problem
};

// The unbiased estimator 1 - C(n-c,k)/C(n,k) as the product 1 - prod_{i=n-c+1..n} (1 - k/i),
// which never forms a binomial coefficient. Requires 0 <= c <= n and 1 <= k <= n.
double PassAtK(int n, int c, int k);

Metrics Compute(const std::vector<Sample>& samples, const MetricOptions& opt);

}  // namespace kf::bench
