#include "execute/timing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

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

double ChooseDelayUs(const std::vector<double>& host_ms) {
  if (host_ms.empty()) return 25;
  std::vector<double> v = host_ms;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  const double want_us = 1.5 * v[v.size() / 2] * 1000.0 + 10.0;
  double d = 25;
  while (d < want_us && d < kMaxDelayUs) d *= 2;
  return std::min(d, kMaxDelayUs);
}

double WarmupDelayUs(const std::vector<double>& warm_host_ms) {
  const size_t skip = warm_host_ms.size() > 1 ? 1 : 0;
  return ChooseDelayUs(std::vector<double>(warm_host_ms.begin() + skip, warm_host_ms.end()));
}

namespace {
double MedianOf(std::vector<double>& v) {
  const size_t n = v.size(), h = n / 2;
  std::nth_element(v.begin(), v.begin() + h, v.end());
  double hi = v[h];
  if (n % 2) return hi;
  return (hi + *std::max_element(v.begin(), v.begin() + h)) / 2;
}
}  // namespace

std::optional<Interval> RatioInterval(const std::vector<double>& base_ms,
                                      const std::vector<double>& cand_ms, int resamples) {
  if (base_ms.size() < 5 || cand_ms.size() < 5 || resamples < 20) return std::nullopt;
  std::mt19937_64 rng(0x6b666f7267650001ULL ^ (base_ms.size() * 1000003ULL + cand_ms.size()));
  std::vector<double> ratios, a(base_ms.size()), b(cand_ms.size());
  ratios.reserve(static_cast<size_t>(resamples));
  std::uniform_int_distribution<size_t> pick_a(0, base_ms.size() - 1), pick_b(0, cand_ms.size() - 1);
  for (int r = 0; r < resamples; ++r) {
    for (auto& x : a) x = base_ms[pick_a(rng)];
    for (auto& x : b) x = cand_ms[pick_b(rng)];
    double mb = MedianOf(b);
    if (mb <= 0) return std::nullopt;
    ratios.push_back(MedianOf(a) / mb);
  }
  std::sort(ratios.begin(), ratios.end());
  return Interval{Quantile(ratios, 0.025), Quantile(ratios, 0.975)};
}

std::string BaselineDisturbed(const BaselineFacts& f, double max_spread) {
  const Summary& s = f.summary;
  if (s.n == 0 || s.median_ms <= 0) return "no timed calls";
  double spread = (s.p75_ms - s.p25_ms) / s.median_ms;
  if (f.stop_reason != "stable" && spread > max_spread) {
    return "its calls spread " + std::to_string(static_cast<int>(spread * 100)) +
           "% around their median";
  }
  if (f.wall_ms > 0 && f.wait_ms > 0.25 * f.wall_ms) {
    return "its host waited for a CPU " + std::to_string(static_cast<int>(100 * f.wait_ms / f.wall_ms)) +
           "% of the time";
  }
  if (f.gpu && f.hidden_fraction < 0.5) {
    return "the host's latency reached the GPU's interval in " +
           std::to_string(static_cast<int>(100 * (1 - f.hidden_fraction))) + "% of its calls";
  }
  return "";
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
