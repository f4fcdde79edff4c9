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

std::string TrialLabel(const std::vector<Trial>& plan, size_t i) {
  const Trial& t = plan[i];
  if (t.variant >= 0) return "shape variant " + std::to_string(t.variant + 1);
  if (t.signed_inputs) return "signed inputs";
  // Number the seeded draws in order of their first use; a later use is a repeat.
  std::vector<uint64_t> seen;
  for (size_t k = 0; k <= i; ++k) {
    const Trial& o = plan[k];
    if (o.variant >= 0 || o.signed_inputs) continue;
    size_t n = 0;
    while (n < seen.size() && seen[n] != o.seed) ++n;
    if (n == seen.size()) seen.push_back(o.seed);
    if (k == i) {
      const std::string name = "seed " + std::to_string(n + 1);
      if (t.swap_seed) return name + ", values swapped";
      return n + 1 < seen.size() ? name + " again" : name;
    }
  }
  return "";
}

bool BeyondBound(double gap_ms, double median_ms) {
  return gap_ms > 0.05 && median_ms < 0.5 * gap_ms;
}

WallClock JudgeWallClock(const WallClockFacts& f) {
  if (!BeyondBound(f.gap_ms, f.median_ms)) return WallClock::kWithin;
  if (f.cpu_bounds_work && f.host_times_ok && !f.host_has_children && f.mean_ms > 0 &&
      !BeyondBound(f.host_cpu_per_call_ms - f.empty_call_cpu_ms, f.mean_ms)) {
    return WallClock::kWithin;
  }
  // The gap is a mean over calls; the median is not. Where the reported times' own mean
  // covers the gap, slow calls inside the timer (page faults, a preempted CPU backend) explain
  // it as well as work outside it would: not measured (kBusy: evaluated again, never `ok`),
  // rather than `cheat` for an honest kernel with a long tail.
  if (f.mean_ms > 0 && !BeyondBound(f.gap_ms, f.mean_ms)) return WallClock::kBusy;
  // The CI run's honest CPU softmax (2026-12-06): 3.87 ms reported, 7.8 ms more wall per call
  // than an empty call, every ms of it on the main thread, none on the others: the main
  // thread's own loop ran slow on a loaded machine.
  if (f.cpu_bounds_work && f.host_times_ok && !f.host_has_children && f.calls > 0 &&
      f.wall_per_call_ms > 0 && f.main_cpu_per_call_ms >= 0.8 * f.wall_per_call_ms &&
      f.others_cpu_per_call_ms <= f.mean_ms + 20.0 / f.calls) {
    return WallClock::kBusy;
  }
  const bool quiet_host =
      f.host_times_ok && f.others_cpu_ms <= 20 + 0.1 * f.span_ms && !f.host_has_children;
  if (quiet_host && !BeyondBound(f.unqueued_gap_ms, f.median_ms)) return WallClock::kBusy;
  return WallClock::kEscaped;
}

TimedOutputs JudgeTimedOutputs(const TimedOutputFacts& f, std::string* why) {
  if (!f.some_set_right) {
    *why = "every timed input set came back wrong";
  } else if (f.wrong_set_right_untimed) {
    *why = "the same inputs give the right answer when the call is not timed";
  } else if (!f.right_set_still_right) {
    *why = "inputs it answered right before now come back wrong: it changes over calls";
  } else {
    *why = "wrong on those inputs timed or not, right on the other sets";
    return TimedOutputs::kIncorrect;
  }
  return TimedOutputs::kCheat;
}

TimingRuling JudgeTiming(WallClock bound, std::optional<TimedOutputs> outputs) {
  const bool escaped = bound == WallClock::kEscaped;
  if (outputs == TimedOutputs::kCheat) return {TimingEnd::kChangesWhenTimed, escaped};
  if (escaped) return {TimingEnd::kEscaped, false};
  if (outputs == TimedOutputs::kIncorrect) return {TimingEnd::kWrongOnTimingSet, false};
  if (bound == WallClock::kBusy) return {TimingEnd::kBusy, false};
  return {TimingEnd::kMeasured, false};
}

}  // namespace kf::execute
