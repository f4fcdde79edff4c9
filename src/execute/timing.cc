#include "execute/timing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kf::execute {
namespace {

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

Summary Summarize(std::vector<double> samples) {
  Summary s;
  std::sort(samples.begin(), samples.end());
  s.n = static_cast<int>(samples.size());
  s.median_ms = Quantile(samples, 0.5);
  s.p10_ms = Quantile(samples, 0.1);
  s.p25_ms = Quantile(samples, 0.25);
  s.p75_ms = Quantile(samples, 0.75);
  s.p90_ms = Quantile(samples, 0.9);
  return s;
}

std::vector<double> Quantiles(std::vector<double> samples, int steps) {
  std::vector<double> out;
  if (samples.empty() || steps < 1) return out;
  std::sort(samples.begin(), samples.end());
  for (int i = 0; i <= steps; ++i) out.push_back(Quantile(samples, static_cast<double>(i) / steps));
  return out;
}

int StoppingRule::Next(const std::vector<double>& samples) {
  const int n = static_cast<int>(samples.size());
  if (n >= opt_.max_samples) {
    reason_ = "max_samples";
    return 0;
  }
  double spent = std::accumulate(samples.begin(), samples.end(), 0.0);
  if (n >= opt_.min_samples) {
    Summary s = Summarize(samples);
    if (s.median_ms > 0 && (s.p75_ms - s.p25_ms) / s.median_ms <= opt_.target_spread) {
      reason_ = "stable";
      return 0;
    }
    if (spent >= opt_.budget_ms) {
      reason_ = "budget";
      return 0;
    }
  }
  // Size the batch from what one call costs so far; the first batch is small.
  double per_call = n > 0 ? std::max(spent / n, 1e-3) : 0;
  int want = n == 0 ? std::min(opt_.min_samples, 5)
                    : static_cast<int>(opt_.batch_target_ms / per_call);
  if (n < opt_.min_samples) want = std::max(want, std::min(opt_.min_samples - n, 5));
  // Never plan past the budget by more than one call, nor past max_samples.
  if (n > 0 && n >= opt_.min_samples) {
    int left_budget = static_cast<int>((opt_.budget_ms - spent) / per_call) + 1;
    want = std::min(want, left_budget);
  }
  want = std::clamp(want, 1, opt_.max_samples - n);
  return want;
}

}  // namespace kf::execute
