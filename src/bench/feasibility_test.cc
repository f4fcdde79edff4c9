#include "bench/feasibility.h"

#include <gtest/gtest.h>

namespace kf::bench {
namespace {

Verdict Fitted() {
  Verdict v;
  v.problem_id = "level1/19_ReLU";
  v.status = VerdictStatus::kOk;
  v.trials_total = v.trials_passed = 8;
  v.stages.push_back({"execute", true, 500,
                      {{"judge_peak_bytes", 25769803776}, {"candidate_peak_bytes", 12884901888}}});
  v.stages.push_back({"correctness", true, 4000, nlohmann::json::object()});
  v.stages.push_back({"timing", true, 2000, {{"input_sets", 2}}});
  v.candidate_ms = TimingSummary{3.3, 3.2, 3.5, 40};
  return v;
}

TEST(Feasibility, ReadsMemoryAndTimesOffTheVerdict) {
  FeasibilityRow r = FeasibilityOf(Fitted());
  EXPECT_TRUE(r.fits);
  EXPECT_FALSE(r.out_of_memory);
  EXPECT_EQ(r.judge_peak_bytes, 25769803776);
  EXPECT_EQ(r.candidate_peak_bytes, 12884901888);
  EXPECT_DOUBLE_EQ(r.ms_per_trial, 500.0);
  EXPECT_DOUBLE_EQ(r.timed_call_ms, 3.3);
  EXPECT_EQ(r.input_sets, 2);
  EXPECT_EQ(ToJson(r)["status"], "ok");
}

TEST(Feasibility, AnOutOfMemoryIsNamed) {
  Verdict v = Fitted();
  v.status = VerdictStatus::kInfraError;
  Diagnostic d;
  d.message = "the judge failed to prepare a trial: OutOfMemoryError: CUDA out of memory. Tried "
              "to allocate 6.00 GiB";
  v.diagnostics.push_back(d);
  FeasibilityRow r = FeasibilityOf(v);
  EXPECT_FALSE(r.fits);
  EXPECT_TRUE(r.out_of_memory);
  EXPECT_EQ(r.message, d.message);
}

TEST(Feasibility, OtherFailuresAreNotMemory) {
  Verdict v = Fitted();
  v.status = VerdictStatus::kIncorrect;
  Diagnostic d;
  d.message = "trial 1, output 0: 3 of 100 elements differ";
  v.diagnostics.push_back(d);
  FeasibilityRow r = FeasibilityOf(v);
  EXPECT_FALSE(r.fits);
  EXPECT_FALSE(r.out_of_memory);
  EXPECT_EQ(r.status, "incorrect");
}

}  // namespace
}  // namespace kf::bench
