// The worker's decisions without Redis or an evaluator: what it refuses, what each pipeline
// outcome becomes, how many jobs it holds and the pipeline it runs.
#include "queue/worker_plan.h"

#include <gtest/gtest.h>

namespace kf::queue {
namespace {

JobSpec Job() {
  return MakeJob("level1/relu", "class Model: pass\n", "class ModelNew: pass\n", "cpu", "s1");
}

Verdict WithDiagnostic(VerdictStatus status, const std::string& code, const std::string& msg) {
  Verdict v;
  v.status = status;
  Diagnostic d;
  d.code = code;
  d.message = msg;
  v.diagnostics.push_back(d);
  return v;
}

TEST(WorkerPlan, EachOutcomeHasItsStep) {
  using pipeline::Outcome;
  Verdict ok;
  ok.status = VerdictStatus::kOk;
  EXPECT_EQ(StepAfter(ok, Outcome::kEvaluated), Step::kPublish);
  EXPECT_EQ(StepAfter(ok, Outcome::kFromStore), Step::kPublish);
  Verdict cheat;
  cheat.status = VerdictStatus::kCheat;
  EXPECT_EQ(StepAfter(cheat, Outcome::kEvaluated), Step::kPublish);
  // Built by a build-only pipeline: the verdict so far is no verdict yet.
  EXPECT_EQ(StepAfter(Verdict{}, Outcome::kBuilt), Step::kForward);
  // Not the candidate's fault: another worker tries.
  EXPECT_EQ(StepAfter(WithDiagnostic(VerdictStatus::kInfraError, "infra", "judge died"),
                      Outcome::kEvaluated),
            Step::kLeavePending);
  EXPECT_EQ(StepAfter(WithDiagnostic(VerdictStatus::kInfraError, execute::kBusyCode, "busy"),
                      Outcome::kEvaluated),
            Step::kLeavePending);
  // The worker stopped before the job started.
  EXPECT_EQ(StepAfter(WithDiagnostic(VerdictStatus::kInfraError, pipeline::kCancelledCode, ""),
                      Outcome::kEvaluated),
            Step::kRelease);
}

TEST(WorkerPlan, AnotherBackendOrOtherSettingsAreRefused) {
  WorkerOptions opt;
  opt.backend = "cpu";
  opt.settings = "s1";
  JobSpec job = Job();
  EXPECT_FALSE(Mismatch(opt, "w1", job).has_value());
  job.backend = "cuda";
  auto v = Mismatch(opt, "w1", job);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->status, VerdictStatus::kInfraError);
  ASSERT_FALSE(v->diagnostics.empty());
  EXPECT_NE(v->diagnostics[0].message.find("for the cuda backend; worker w1 runs cpu"),
            std::string::npos);
  job = Job();
  job.settings = "s2";
  v = Mismatch(opt, "w1", job);
  ASSERT_TRUE(v.has_value());
  EXPECT_NE(v->diagnostics[0].message.find("other evaluation settings"), std::string::npos);
  // A worker that states neither takes every job.
  EXPECT_FALSE(Mismatch(WorkerOptions{}, "w1", job).has_value());
}

TEST(WorkerPlan, TheDeliveryLimitVerdictSaysWhy) {
  Verdict v = OverDeliveryLimit(Job(), 3, "the judge process died", "w1");
  EXPECT_EQ(v.status, VerdictStatus::kInfraError);
  ASSERT_FALSE(v.diagnostics.empty());
  const std::string& m = v.diagnostics[0].message;
  EXPECT_NE(m.find("2 times without a verdict"), std::string::npos) << m;
  EXPECT_NE(m.find("last error: the judge process died"), std::string::npos) << m;
  EXPECT_EQ(OverDeliveryLimit(Job(), 3, "", "w1").diagnostics[0].message.find("last error"),
            std::string::npos);
}

TEST(WorkerPlan, HeldJobsAndPipelineOptionsFollowTheRole) {
  WorkerOptions build;
  build.role = Role::kBuild;
  build.build_threads = 3;
  EXPECT_EQ(InHandLimit(build, 0), 3);
  pipeline::PipelineOptions po = WorkerPipelineOptions(build, 0);
  EXPECT_TRUE(po.build_only);
  EXPECT_TRUE(po.reuse_stored);
  EXPECT_EQ(po.build_threads, 3);
  EXPECT_EQ(po.queue_capacity, 3u);

  WorkerOptions gpu;
  gpu.role = Role::kGpu;
  EXPECT_EQ(InHandLimit(gpu, 4), 8);  // each lane running one, the next prepared behind it
  po = WorkerPipelineOptions(gpu, 4);
  EXPECT_FALSE(po.build_only);
  EXPECT_TRUE(po.warm_lanes);
  EXPECT_TRUE(po.retry_busy);
  EXPECT_EQ(po.queue_capacity, 8u);  // every held job fits the intake: TrySubmit never refuses
  gpu.in_hand = 1;
  EXPECT_EQ(InHandLimit(gpu, 4), 1);
}

}  // namespace
}  // namespace kf::queue
