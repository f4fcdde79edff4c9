#include "execute/trial_plan.h"

#include <gtest/gtest.h>

#include <set>

namespace kf::execute {
namespace {

TEST(PlanTrials, RepeatsSwapsSignsAndVariantsInOrder) {
  const auto plan = PlanTrials(5, 1234, 2);
  // A B A A' C D E, signed, variant 0, variant 1
  ASSERT_EQ(plan.size(), 10u);
  EXPECT_EQ(plan[2].seed, plan[0].seed);  // A again after B
  EXPECT_EQ(plan[2].swap_seed, 0u);
  EXPECT_EQ(plan[3].seed, plan[0].seed);  // A with values swapped
  EXPECT_NE(plan[3].swap_seed, 0u);
  std::set<uint64_t> fresh = {plan[0].seed, plan[1].seed, plan[4].seed, plan[5].seed, plan[6].seed};
  EXPECT_EQ(fresh.size(), 5u);  // five distinct draws
  EXPECT_TRUE(plan[7].signed_inputs);
  for (int i = 0; i < 7; ++i) EXPECT_FALSE(plan[static_cast<size_t>(i)].signed_inputs) << i;
  EXPECT_EQ(plan[8].variant, 0);
  EXPECT_EQ(plan[9].variant, 1);
  for (const auto& t : plan) EXPECT_LT(t.seed, uint64_t{1} << 62);
}

TEST(PlanTrials, TheSameSeedGivesTheSamePlanAndAnotherSeedAnother) {
  const auto a = PlanTrials(3, 7, 0), b = PlanTrials(3, 7, 0), c = PlanTrials(3, 8, 0);
  ASSERT_EQ(a.size(), 6u);  // A B A A' C signed
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].seed, b[i].seed) << i;
  EXPECT_NE(a[0].seed, c[0].seed);
  // One trial: no B, so no repeat and no swapped trial.
  const auto one = PlanTrials(1, 7, 0);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_TRUE(one[1].signed_inputs);
}

TEST(TrialLabel, NamesEachTrialOfThePlan) {
  const auto plan = PlanTrials(3, 99, 1);  // A B A A' C signed variant
  std::vector<std::string> labels;
  for (size_t i = 0; i < plan.size(); ++i) labels.push_back(TrialLabel(plan, i));
  EXPECT_EQ(labels,
            (std::vector<std::string>{"seed 1", "seed 2", "seed 1 again", "seed 1, values swapped",
                                      "seed 3", "signed inputs", "shape variant 1"}));
}

WallClockFacts Facts(double median, double gap, double unqueued) {
  WallClockFacts f;
  f.median_ms = median;
  f.gap_ms = gap;
  f.unqueued_gap_ms = unqueued;
  f.host_times_ok = true;
  f.span_ms = 1000;
  return f;
}

TEST(WallClock, WithinTheBound) {
  EXPECT_EQ(JudgeWallClock(Facts(1.0, 1.5, 1.5)), WallClock::kWithin);      // reported >= half
  EXPECT_EQ(JudgeWallClock(Facts(0.001, 0.04, 0.04)), WallClock::kWithin);  // under the floor
  EXPECT_FALSE(BeyondBound(0.05, 0.0));
  EXPECT_TRUE(BeyondBound(0.051, 0.0));
}

TEST(WallClock, EscapedWorkIsACheatUnlessTheHostOnlyWaited) {
  // 5 ms of wall per call for 1 ms reported, and the host never waited: work escaped.
  EXPECT_EQ(JudgeWallClock(Facts(1.0, 5.0, 5.0)), WallClock::kEscaped);
  // The same gap, all of it the host's main thread waiting for a CPU: the machine's load.
  EXPECT_EQ(JudgeWallClock(Facts(1.0, 5.0, 1.2)), WallClock::kBusy);
  // ...but not when the host made load of its own: a busy thread, or a child process.
  WallClockFacts busy_thread = Facts(1.0, 5.0, 1.2);
  busy_thread.others_cpu_ms = 200;  // over 20 + 10% of the 1000 ms span
  EXPECT_EQ(JudgeWallClock(busy_thread), WallClock::kEscaped);
  WallClockFacts child = Facts(1.0, 5.0, 1.2);
  child.host_has_children = true;
  EXPECT_EQ(JudgeWallClock(child), WallClock::kEscaped);
  WallClockFacts unknown = Facts(1.0, 5.0, 1.2);
  unknown.host_times_ok = false;  // /proc could not be read: no excuse
  EXPECT_EQ(JudgeWallClock(unknown), WallClock::kEscaped);
}

TEST(WallClock, ALongTailInsideTheTimerIsNotEscapedWork) {
  // The CI run's honest CPU ReLU: median 1.05 ms, but some calls took 7 ms inside the timer, so
  // the wall clock's mean per call (2.92 ms) is beyond twice the median and within twice the
  // reported mean: not measured (kBusy, never `ok`), not `cheat`.
  WallClockFacts tail = Facts(1.049, 2.92, 2.92);
  tail.mean_ms = 2.1;
  EXPECT_EQ(JudgeWallClock(tail), WallClock::kBusy);
  // Work outside the timer leaves the reported mean small too: still escaped.
  WallClockFacts escaped = Facts(1.0, 5.0, 5.0);
  escaped.mean_ms = 1.1;
  EXPECT_EQ(JudgeWallClock(escaped), WallClock::kEscaped);
}

// The CPU time excuses nothing where it cannot see all the work: work a child process did is
// not in the host's CPU time, nor is any when /proc was unread, and on a GPU the host's CPU says
// nothing of the device's work.
void ExpectNoCpuExcuse(const WallClockFacts& excused) {
  WallClockFacts child = excused;
  child.host_has_children = true;
  EXPECT_EQ(JudgeWallClock(child), WallClock::kEscaped);
  WallClockFacts unread = excused;
  unread.host_times_ok = false;
  EXPECT_EQ(JudgeWallClock(unread), WallClock::kEscaped);
  WallClockFacts gpu = excused;
  gpu.cpu_bounds_work = false;
  EXPECT_EQ(JudgeWallClock(gpu), WallClock::kEscaped);
}

TEST(WallClock, OnTheHostsCpusItsCpuTimeProvesNoWorkEscaped) {
  // The bench test's honest CPU ReLU beside three test suites on two cores: 1.586 ms reported,
  // 3.781 ms of wall per call, the host's main thread barely waited (the judge's side was
  // preempted, not the host). Its threads used 1.7 ms of CPU per call: no room for work outside
  // the timer.
  WallClockFacts honest = Facts(1.586, 3.781, 3.77);
  honest.mean_ms = 1.6;
  EXPECT_EQ(JudgeWallClock(honest), WallClock::kEscaped);  // without the CPU proof: a cheat
  honest.cpu_bounds_work = true;
  honest.host_cpu_per_call_ms = 1.7;
  EXPECT_EQ(JudgeWallClock(honest), WallClock::kWithin);
  // A thread working outside the timer spends CPU beyond twice what the timer saw: escaped.
  WallClockFacts thread = honest;
  thread.host_cpu_per_call_ms = 3.9;
  EXPECT_EQ(JudgeWallClock(thread), WallClock::kEscaped);
  ExpectNoCpuExcuse(honest);
}

TEST(WallClock, TheFlushBeforeEachCallIsNotWorkThatEscaped) {
  // Like the false H07 of a clean-clone CI run of 64d3dc0 (two loaded cores, the CPU flush at
  // 64 MiB): an honest ReLU's wall clock saw about 4 ms a call more than an empty call's, and
  // its host's threads used 8.5 ms of CPU a call, most of it the 64 MiB flush before each call,
  // which the judge's empty call (the same flush) used as well. Counted whole: a cheat.
  WallClockFacts honest = Facts(1.5, 4.0, 4.0);
  honest.mean_ms = 1.5;
  honest.cpu_bounds_work = true;
  honest.host_cpu_per_call_ms = 8.0;
  EXPECT_EQ(JudgeWallClock(honest), WallClock::kEscaped);
  honest.empty_call_cpu_ms = 6.3;
  EXPECT_EQ(JudgeWallClock(honest), WallClock::kWithin);
  // A thread doing the real work outside the timer still spends CPU beyond the flush's.
  WallClockFacts thread = honest;
  thread.host_cpu_per_call_ms = 6.3 + 3.5;
  EXPECT_EQ(JudgeWallClock(thread), WallClock::kEscaped);
  // The empty call's CPU excuses nothing where the CPU proves nothing (a GPU's kernels).
  ExpectNoCpuExcuse(honest);
}

TEST(WallClock, AGapTheHostsMainThreadMadeOnItsCpuIsLoad) {
  // The false H07 of CI's run of 656f7ac: an honest CPU softmax beside 27 other suites on two
  // cores reported 3.871 ms, and the wall clock saw 7.815 ms more per call than an empty call.
  // The host's threads used 13 ms of CPU per call, 3.956 ms of it the empty call's flush and
  // rewrite, and all of it on the main thread, which ran through the whole call.
  WallClockFacts honest = Facts(3.871, 7.815, 7.8);
  honest.mean_ms = 3.88;
  honest.cpu_bounds_work = true;
  honest.host_cpu_per_call_ms = 13.0;
  honest.empty_call_cpu_ms = 3.956;
  honest.calls = 20;
  honest.main_cpu_per_call_ms = 12.9;
  honest.others_cpu_per_call_ms = 0.1;
  honest.wall_per_call_ms = 12.5;
  EXPECT_EQ(JudgeWallClock(honest), WallClock::kBusy);  // evaluated again, never `ok`
  // Another thread doing the work: its CPU per call is beyond what the timer reported.
  WallClockFacts thread = honest;
  thread.others_cpu_per_call_ms = 3.88 + 2.0;
  EXPECT_EQ(JudgeWallClock(thread), WallClock::kEscaped);
  // A main thread that sat waiting (for a lock, the GIL, another thread's result) for part of
  // the call: something else stretched the wall clock.
  WallClockFacts waiting = honest;
  waiting.main_cpu_per_call_ms = 0.7 * honest.wall_per_call_ms;
  EXPECT_EQ(JudgeWallClock(waiting), WallClock::kEscaped);
  ExpectNoCpuExcuse(honest);
}

TEST(TimedOutputs, WrongWhenTimedIsACheatOnlyWhereTheUntimedCallsShowIt) {
  std::string why;
  // A call counter: every timed set wrong, or right sets turning wrong later.
  EXPECT_EQ(JudgeTimedOutputs({false, false, false}, &why), TimedOutputs::kCheat);
  EXPECT_EQ(JudgeTimedOutputs({true, false, false}, &why), TimedOutputs::kCheat);
  EXPECT_NE(why.find("changes over calls"), std::string::npos);
  // Right on the same inputs when not timed: it detects the timer.
  EXPECT_EQ(JudgeTimedOutputs({true, true, true}, &why), TimedOutputs::kCheat);
  EXPECT_NE(why.find("not timed"), std::string::npos);
  // Wrong on those inputs either way, right on the others: a kernel right on some inputs
  // only (the off-by-one softmax under a loose tolerance), not a cheat.
  EXPECT_EQ(JudgeTimedOutputs({true, false, true}, &why), TimedOutputs::kIncorrect);
}

TEST(Timing, WrongOutputsAreProofWhateverTheLoadAGapOnlyWhenEscaped) {
  // The CI run of 2026-12-05: a call counter (zeros once timed) on a loaded machine, its gap
  // escaped too. The outputs name it H15, the gap H07 beside it.
  TimingRuling both = JudgeTiming(WallClock::kEscaped, TimedOutputs::kCheat);
  EXPECT_EQ(both.end, TimingEnd::kChangesWhenTimed);
  EXPECT_TRUE(both.also_escaped);
  // A busy machine excuses the gap, never the outputs.
  TimingRuling busy = JudgeTiming(WallClock::kBusy, TimedOutputs::kCheat);
  EXPECT_EQ(busy.end, TimingEnd::kChangesWhenTimed);
  EXPECT_FALSE(busy.also_escaped);
  EXPECT_EQ(JudgeTiming(WallClock::kBusy, TimedOutputs::kIncorrect).end,
            TimingEnd::kWrongOnTimingSet);
  // Escaped work is a cheat even when its outputs look like an honest mistake.
  EXPECT_EQ(JudgeTiming(WallClock::kEscaped, TimedOutputs::kIncorrect).end, TimingEnd::kEscaped);
  EXPECT_EQ(JudgeTiming(WallClock::kEscaped, std::nullopt).end, TimingEnd::kEscaped);
  // Right outputs: the bound alone decides.
  EXPECT_EQ(JudgeTiming(WallClock::kBusy, std::nullopt).end, TimingEnd::kBusy);
  EXPECT_EQ(JudgeTiming(WallClock::kWithin, std::nullopt).end, TimingEnd::kMeasured);
  EXPECT_EQ(JudgeTiming(WallClock::kWithin, TimedOutputs::kIncorrect).end,
            TimingEnd::kWrongOnTimingSet);
}

}  // namespace
}  // namespace kf::execute
