// The decisions of a candidate's run that need no process: which correctness trials run in
// which order (PlanTrials), what a gap between the wall clock and the reported times means
// (JudgeWallClock), and what wrong timed outputs mean (JudgeTimedOutputs). Pure functions,
// tested on synthetic facts (trial_plan_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kf::execute {

// One correctness trial: inputs drawn from `seed` (signed values when `signed_inputs`), with a
// few values swapped when `swap_seed` is not 0, on shape variant `variant` (-1: the problem's
// own shape).
struct Trial {
  uint64_t seed = 0;
  bool signed_inputs = false;
  uint64_t swap_seed = 0;
  int variant = -1;
};

// K seeded trials in the order A, B, A, A', C, D, ... (A again after B, in the same buffers, so
// answers remembered by pointer or by call count are wrong; A' is A with a few values swapped,
// so answers remembered by a sample or a checksum of the contents are wrong too: H06), then a
// signed-input trial (H11), then one per shape variant the problem declares (H19). The same
// `seed` gives the same plan; every seed fits in 62 bits (JSON carries it exactly).
std::vector<Trial> PlanTrials(int trials, uint64_t seed, size_t shape_variants);
// What the verdict's trial records call plan[i]: "seed 2", "seed 1 again", "seed 1, values
// swapped", "signed inputs", "shape variant 1" (seeds and variants numbered from 1).
std::string TrialLabel(const std::vector<Trial>& plan, size_t i);

// What the timing loop saw, for the wall-clock bound (H07) and its excuse (busy).
struct WallClockFacts {
  double median_ms = 0;      // the reported device time per call
  double mean_ms = 0;        // the reported times' mean over the calls the gap was measured on
  double gap_ms = 0;         // wall time per bounded call less an empty call's cost (the least
                             // of the measurements)
  double unqueued_gap_ms = 0;  // the same gap less the host main thread's waits for a CPU
  bool host_times_ok = false;  // the host's /proc times could be read
  double others_cpu_ms = 0;    // CPU of the host's other threads over the timing span
  double span_ms = 0;          // the timing span
  bool host_has_children = false;
  // Where kernels run on the host's CPUs (backend::Device::kernels_on_host_cpus): every host
  // thread's CPU per bounded call, in the batches the gap was measured on.
  bool cpu_bounds_work = false;
  double host_cpu_per_call_ms = 0;
  // What an empty timed call's work outside the timer took of the judge's CPU, per call: the
  // cache flush and the input rewrite that the host's CPU per call counts too (0 when unread).
  double empty_call_cpu_ms = 0;
  // The same batches seen from the host's side: its main thread's CPU per call (schedstat,
  // exact), its other threads' CPU per call (clock ticks, so within 20 ms over all `calls`),
  // and the wall time per call the gap was taken from.
  int calls = 0;
  double main_cpu_per_call_ms = 0;
  double others_cpu_per_call_ms = 0;
  double wall_per_call_ms = 0;
};
enum class WallClock { kWithin, kBusy, kEscaped };

// A gap is beyond the bound when it is over 0.05 ms and the reported time is under half of it:
// work the timer did not see (another stream or thread, deferred work). It is the machine's
// load (kBusy, evaluated again, never `ok`) only when the gap minus the host's waits for a CPU
// is within the bound and the host made no load of its own (its other threads idle within
// 20 ms + 10% of the span, no child process); else kEscaped (cheat H07). Where kernels run on
// the host's own CPUs, work outside the timer costs CPU time: a host (no child process) whose
// threads together used CPU per call within the same bound of the reported time did no work the
// timer missed, and the gap is the judge's own delay (its thread or the reply preempted on a
// loaded machine): kWithin. The host's CPU per call is taken less an empty call's CPU outside
// its timer (the flush before each call: 6 ms of a 64 MiB flush against a 2 ms ReLU). Never on
// a GPU, where work runs without the host's CPU.
// Also on the host's CPUs: a gap the host's main thread made is kBusy, not kEscaped. When that
// thread was on a CPU for at least 80% of each call's wall time and the other threads used no
// more CPU per call than the timer reported, work done elsewhere did not stretch the wall clock
// (it would have run beside a thread that never waited for it); the stretch is the main
// thread's own loop outside the timer (flush, input rewrite, releases) running slow on a
// loaded machine. Not measured, evaluated again, never `ok`.
bool BeyondBound(double gap_ms, double median_ms);
WallClock JudgeWallClock(const WallClockFacts& f);

// A candidate right in every correctness trial came back wrong on a timed input set. What the
// untimed calls made after timing showed: the same wrong set called again without the timer,
// and a set it got right while timed (if any) called again.
struct TimedOutputFacts {
  bool some_set_right = false;      // at least one timed set came back right
  bool wrong_set_right_untimed = false;
  bool right_set_still_right = false;
};
enum class TimedOutputs { kCheat, kIncorrect };
// H15 (it behaves differently when measured) when every timed set was wrong, when the same
// inputs are right untimed, or when a set it got right before is now wrong (it changes over
// calls); else kIncorrect: wrong on those inputs whether timed or not, an honest mistake the
// correctness trials happened not to meet. `why` says which, for the diagnostic.
TimedOutputs JudgeTimedOutputs(const TimedOutputFacts& f, std::string* why);

// What timing ends in, from the wall-clock bound and, when a timed input set came back wrong,
// what JudgeTimedOutputs made of it (nullopt: every timed output was right). Wrong outputs are
// proof whatever the load; a gap is proof only when kEscaped, and a busy machine excuses the gap
// but not the outputs. So a call counter is named H15 even when load also stretched its wall
// clock (and H07 beside it when the gap is escaped work), and escaped work is a cheat even when
// its outputs look like an honest mistake.
enum class TimingEnd {
  kMeasured,          // the times stand
  kBusy,              // not measured: evaluated again, never `ok`
  kEscaped,           // cheat H07
  kChangesWhenTimed,  // cheat H15 (with H07 too when `also_escaped`)
  kWrongOnTimingSet,  // incorrect: one more trial, failed
};
struct TimingRuling {
  TimingEnd end = TimingEnd::kMeasured;
  bool also_escaped = false;  // kChangesWhenTimed and the gap was escaped work as well
};
TimingRuling JudgeTiming(WallClock bound, std::optional<TimedOutputs> outputs);

}  // namespace kf::execute
