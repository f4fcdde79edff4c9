#include "execute/trial_plan.h"

#include <random>

namespace kf::execute {

std::vector<Trial> PlanTrials(int trials, uint64_t seed, size_t shape_variants) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> seeds;
  for (int i = 0; i < trials; ++i) seeds.push_back(rng() >> 2);
  std::vector<Trial> order;
  for (int i = 0; i < trials; ++i) {
    order.push_back({seeds[static_cast<size_t>(i)]});
    if (i == 1) {
      order.push_back({seeds[0]});                           // A again, after B
      order.push_back({seeds[0], false, (rng() >> 2) | 1});  // A with values swapped
    }
  }
  order.push_back({rng() >> 2, true});
  for (size_t v = 0; v < shape_variants; ++v) {
    order.push_back({rng() >> 2, false, 0, static_cast<int>(v)});
  }
  return order;
}

bool BeyondBound(double gap_ms, double median_ms) {
  return gap_ms > 0.05 && median_ms < 0.5 * gap_ms;
}

WallClock JudgeWallClock(const WallClockFacts& f) {
  if (!BeyondBound(f.gap_ms, f.median_ms)) return WallClock::kWithin;
  const bool quiet_host = f.host_times_ok && f.others_cpu_ms <= 20 + 0.1 * f.span_ms &&
                          !f.host_has_children;
  if (quiet_host && !BeyondBound(f.unqueued_gap_ms, f.median_ms)) return WallClock::kBusy;
  return WallClock::kEscaped;
}

}  // namespace kf::execute
