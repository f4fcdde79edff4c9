// The Evaluator's verdict decisions as pure functions of what the stages reported: whose
// fault a result is (the candidate's or the machine's), what is tried again, what is stored.
// The Evaluator (and the Pipeline, for load-spoiled timings) call these; decide_test.cc tests
// each on synthetic results. Nothing here runs, reads or waits.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "execute/execute.h"
#include "score/verdict.h"

namespace kf::eval {

// The verdict status a lane's outcome maps to.
VerdictStatus FromOutcome(execute::Outcome o);

// A run's status. A run-time build the machine failed (`environment_fault`: a missing toolchain
// part) outranks whatever the candidate then did: this machine cannot judge it (infra_error).
// Otherwise a failed run-time build of the candidate's is compile_error, and else the outcome
// stands.
VerdictStatus RunStatus(execute::Outcome outcome, bool build_failed, bool environment_fault);

// Whether a run's outcome may be the lane's doing rather than the candidate's when the lane's
// judge or zygote was found dead after it: the candidate's process dying (runtime_error), a
// reply that never came (timeout), or the judge gone when a trial was asked of it (infra).
// Such a verdict is infra_error with execute::kLaneDiedCode: nothing is known about the
// candidate, and it is run again. A decided outcome (incorrect, cheat, ok) stands.
bool LaneDeathExplains(execute::Outcome outcome);

// What the builds of a candidate's statically resolved load_inline calls came to.
struct StaticBuilds {
  bool infra = false;        // a build failed as a call (worker died, machine too busy)
  bool environment = false;  // a build the machine's toolchain failed
  bool failed = false;       // a build the candidate's code failed
};
// The status the static builds decide, in that order of rank (the machine's faults outrank the
// candidate's errors); nothing when every build succeeded and the candidate goes on to a lane.
std::optional<VerdictStatus> StaticBuildStatus(const StaticBuilds& b);

// Whether a verdict is stored under `key`. Infrastructure failures say nothing about the
// candidate: never stored, tried again later. An empty key (the toolchain could not be
// fingerprinted) stores nothing.
bool ShouldStore(VerdictStatus status, const std::string& key);

// Whether a verdict is an infra_error because load on the machine spoiled its timing (a
// diagnostic of code execute::kBusyCode): worth running again when the machine is quieter.
bool SpoiledByLoad(const Verdict& v);

// Whether a verdict is an infra_error because the lane's judge or zygote died during the run
// (a diagnostic of code execute::kLaneDiedCode): worth running again on the lane started anew.
bool LaneDied(const Verdict& v);

// A baseline measurement disturbed by load is taken again this many times at most.
inline constexpr int kBaselineRetries = 2;
// Whether to measure the baselines again after `retries_done` retries: the last measurement
// succeeded but was disturbed, and retries are left. A failed one is an error, not retried.
bool MeasureBaselinesAgain(const Result<execute::BaselineResult>& last, int retries_done);
// Whether measured baselines are stored: only undisturbed ones, so a disturbed measurement can
// never set every later verdict's speedup. One recorded beside a candidate (`interleaved`) must
// have an eager time too.
bool StoreBaselines(const execute::BaselineResult& b, bool interleaved);

// Whether an ok verdict's speedup over eager is implausible (above `reverify_speedup`) and is
// measured again in a fresh candidate process before it counts.
bool NeedsReverify(const Verdict& v, double reverify_speedup);
// What a re-verification's run means for the verdict.
enum class Reverified {
  kFailed,        // not ok: its outcome becomes the verdict's status
  kSlowerCounts,  // ok and slower than the first run: its times and speedups count
  kFirstCounts,   // ok and no slower (or untimed): the first run's stand
};
Reverified JudgeReverify(const execute::ExecResult& again, double first_median_ms);

}  // namespace kf::eval
