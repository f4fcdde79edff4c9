// The verdict decisions on synthetic results: whose fault, what is tried again, what is stored.
#include "eval/decide.h"

#include <gtest/gtest.h>

namespace kf::eval {
namespace {

using execute::Outcome;

TEST(VerdictDecisions, EveryOutcomeMapsToItsStatus) {
  EXPECT_EQ(FromOutcome(Outcome::kOk), VerdictStatus::kOk);
  EXPECT_EQ(FromOutcome(Outcome::kFormatError), VerdictStatus::kFormatError);
  EXPECT_EQ(FromOutcome(Outcome::kCompileError), VerdictStatus::kCompileError);
  EXPECT_EQ(FromOutcome(Outcome::kRuntimeError), VerdictStatus::kRuntimeError);
  EXPECT_EQ(FromOutcome(Outcome::kTimeout), VerdictStatus::kTimeout);
  EXPECT_EQ(FromOutcome(Outcome::kIncorrect), VerdictStatus::kIncorrect);
  EXPECT_EQ(FromOutcome(Outcome::kCheat), VerdictStatus::kCheat);
  EXPECT_EQ(FromOutcome(Outcome::kInfraError), VerdictStatus::kInfraError);
}

TEST(VerdictDecisions, ALaneThatDiedExplainsACrashATimeoutOrAGoneJudgeButNotADecidedOutcome) {
  EXPECT_TRUE(LaneDeathExplains(Outcome::kRuntimeError));
  EXPECT_TRUE(LaneDeathExplains(Outcome::kTimeout));
  EXPECT_TRUE(LaneDeathExplains(Outcome::kInfraError));  // the judge gone when asked for a trial
  for (Outcome o : {Outcome::kOk, Outcome::kIncorrect, Outcome::kCheat, Outcome::kFormatError,
                    Outcome::kCompileError}) {
    EXPECT_FALSE(LaneDeathExplains(o));
  }
}

TEST(VerdictDecisions, AMachineFaultInARunTimeBuildOutranksTheCandidatesOutcome) {
  for (Outcome o : {Outcome::kOk, Outcome::kIncorrect, Outcome::kCheat, Outcome::kRuntimeError}) {
    EXPECT_EQ(RunStatus(o, /*build_failed=*/true, /*environment_fault=*/true),
              VerdictStatus::kInfraError);
    EXPECT_EQ(RunStatus(o, false, true), VerdictStatus::kInfraError);
    // The candidate's own failed build is its fault, whatever the run did after it.
    EXPECT_EQ(RunStatus(o, true, false), VerdictStatus::kCompileError);
    EXPECT_EQ(RunStatus(o, false, false), FromOutcome(o));
  }
  // A lane's own failure (a crashed judge) stays the machine's.
  EXPECT_EQ(RunStatus(Outcome::kInfraError, false, false), VerdictStatus::kInfraError);
}

TEST(VerdictDecisions, StaticBuildsTheMachinesFaultsOutrankTheCandidatesErrors) {
  EXPECT_EQ(StaticBuildStatus({}), std::nullopt);
  EXPECT_EQ(StaticBuildStatus({.failed = true}), VerdictStatus::kCompileError);
  EXPECT_EQ(StaticBuildStatus({.infra = true}), VerdictStatus::kInfraError);
  EXPECT_EQ(StaticBuildStatus({.environment = true}), VerdictStatus::kInfraError);
  EXPECT_EQ(StaticBuildStatus({.infra = true, .failed = true}), VerdictStatus::kInfraError);
  EXPECT_EQ(StaticBuildStatus({.environment = true, .failed = true}), VerdictStatus::kInfraError);
}

TEST(VerdictDecisions, InfrastructureFailuresAndUnkeyedVerdictsAreNeverStored) {
  EXPECT_FALSE(ShouldStore(VerdictStatus::kInfraError, "key"));
  EXPECT_FALSE(ShouldStore(VerdictStatus::kOk, ""));
  for (VerdictStatus s :
       {VerdictStatus::kOk, VerdictStatus::kFormatError, VerdictStatus::kCompileError,
        VerdictStatus::kRuntimeError, VerdictStatus::kTimeout, VerdictStatus::kIncorrect,
        VerdictStatus::kCheat}) {
    EXPECT_TRUE(ShouldStore(s, "key")) << StatusName(s);
  }
}

Diagnostic WithCode(const std::string& code) {
  Diagnostic d;
  d.stage = "timing";
  d.code = code;
  return d;
}

TEST(VerdictDecisions, OnlyAnInfraErrorWithTheBusyDiagnosticIsSpoiledByLoad) {
  Verdict v;
  v.status = VerdictStatus::kInfraError;
  EXPECT_FALSE(SpoiledByLoad(v));
  v.diagnostics.push_back(WithCode("infra"));
  EXPECT_FALSE(SpoiledByLoad(v));
  v.diagnostics.push_back(WithCode(execute::kBusyCode));
  EXPECT_TRUE(SpoiledByLoad(v));
  // The same diagnostic on a verdict about the candidate is no reason to run it again.
  v.status = VerdictStatus::kTimeout;
  EXPECT_FALSE(SpoiledByLoad(v));
}

TEST(VerdictDecisions, OnlyAnInfraErrorWithTheLaneDiedDiagnosticNamesADeadLane) {
  Verdict v;
  v.status = VerdictStatus::kInfraError;
  v.diagnostics.push_back(WithCode(execute::kBusyCode));
  EXPECT_FALSE(LaneDied(v));
  v.diagnostics.push_back(WithCode(execute::kLaneDiedCode));
  EXPECT_TRUE(LaneDied(v));
  v.status = VerdictStatus::kRuntimeError;
  EXPECT_FALSE(LaneDied(v));
}

execute::BaselineResult Measured(const std::string& disturbed, bool eager = true) {
  execute::BaselineResult b;
  b.disturbed = disturbed;
  if (eager) b.eager = execute::TimingResult{};
  return b;
}

TEST(VerdictDecisions, DisturbedBaselinesAreMeasuredAgainTwiceAtMost) {
  Result<execute::BaselineResult> disturbed = Measured("load");
  EXPECT_TRUE(MeasureBaselinesAgain(disturbed, 0));
  EXPECT_TRUE(MeasureBaselinesAgain(disturbed, 1));
  EXPECT_FALSE(MeasureBaselinesAgain(disturbed, kBaselineRetries));
  EXPECT_FALSE(MeasureBaselinesAgain(Result<execute::BaselineResult>(Measured("")), 0));
  // A failed measurement is an error to report, not one to repeat.
  EXPECT_FALSE(MeasureBaselinesAgain(Result<execute::BaselineResult>(Status::Unavailable("x")), 0));
}

TEST(VerdictDecisions, OnlyUndisturbedBaselinesAreStored) {
  EXPECT_TRUE(StoreBaselines(Measured(""), false));
  EXPECT_TRUE(StoreBaselines(Measured(""), true));
  EXPECT_FALSE(StoreBaselines(Measured("load"), false));
  EXPECT_FALSE(StoreBaselines(Measured("load"), true));
  // A record beside a candidate without an eager time is not a baseline; a measurement of its
  // own without one is stored as it is (compile unavailable, say).
  EXPECT_FALSE(StoreBaselines(Measured("", false), true));
  EXPECT_TRUE(StoreBaselines(Measured("", false), false));
}

TEST(VerdictDecisions, OnlyASpeedupAboveTheThresholdIsReverified) {
  Verdict v;
  EXPECT_FALSE(NeedsReverify(v, 10));
  v.candidate_ms = TimingSummary{1.0, 0.9, 1.1, 10};
  EXPECT_FALSE(NeedsReverify(v, 10));  // no eager time: no speedup to doubt
  v.eager_ms = 10.0;
  EXPECT_FALSE(NeedsReverify(v, 10));  // exactly the threshold is plausible
  v.eager_ms = 10.5;
  EXPECT_TRUE(NeedsReverify(v, 10));
}

execute::ExecResult Again(Outcome o, std::optional<double> median_ms) {
  execute::ExecResult r;
  r.outcome = o;
  if (median_ms) {
    r.timing = execute::TimingResult{};
    r.timing->summary.median_ms = *median_ms;
  }
  return r;
}

TEST(VerdictDecisions, AReverificationCountsWhenItFailsOrIsSlower) {
  EXPECT_EQ(JudgeReverify(Again(Outcome::kIncorrect, 5.0), 1.0), Reverified::kFailed);
  EXPECT_EQ(JudgeReverify(Again(Outcome::kInfraError, std::nullopt), 1.0), Reverified::kFailed);
  EXPECT_EQ(JudgeReverify(Again(Outcome::kOk, 2.0), 1.0), Reverified::kSlowerCounts);
  EXPECT_EQ(JudgeReverify(Again(Outcome::kOk, 1.0), 1.0), Reverified::kFirstCounts);
  EXPECT_EQ(JudgeReverify(Again(Outcome::kOk, 0.5), 1.0), Reverified::kFirstCounts);
  EXPECT_EQ(JudgeReverify(Again(Outcome::kOk, std::nullopt), 1.0), Reverified::kFirstCounts);
}

}  // namespace
}  // namespace kf::eval
