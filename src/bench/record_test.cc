#include "bench/record.h"

#include <gtest/gtest.h>

namespace kf::bench {
namespace {

TEST(BenchRecord, DefaultModelIsTheSamplesFolderName) {
  EXPECT_EQ(DefaultModelName("runs/gpt-x"), "gpt-x");
  EXPECT_EQ(DefaultModelName("runs/gpt-x/"), "gpt-x");
  EXPECT_EQ(DefaultModelName("/data/MusaCoder-27B/./"), "MusaCoder-27B");
  EXPECT_FALSE(DefaultModelName(".").empty());
  EXPECT_NE(DefaultModelName("."), ".");
}

TEST(BenchRecord, SampleRowCarriesTheVerdictsNumbers) {
  SampleRecord rec;
  rec.level = "level1";
  rec.problem = "relu";
  rec.sample_path = "s/level1/relu/sample_3.py";
  rec.index = 3;
  rec.from_store = true;
  rec.verdict.problem_hash = "ph";
  rec.verdict.candidate_hash = "ch";
  rec.verdict.status = VerdictStatus::kOk;
  rec.verdict.reward = 1.25;
  rec.verdict.speedup_vs_eager = 1.5;
  rec.verdict.candidate_ms = TimingSummary{0.2, 0.1, 0.3, 10};
  store::RunSampleRow r = SampleRowOf(rec, "key");
  EXPECT_EQ(r.problem_id, "level1/relu");
  EXPECT_EQ(r.index, 3);
  EXPECT_EQ(r.sample_path, "s/level1/relu/sample_3.py");
  EXPECT_EQ(r.verdict_key, "key");
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.reward, 1.25);
  EXPECT_EQ(r.speedup_vs_eager, 1.5);
  EXPECT_FALSE(r.speedup_vs_compile.has_value());
  EXPECT_EQ(r.candidate_ms, 0.2);
  EXPECT_TRUE(r.from_store);
}

TEST(BenchRecord, RunRowHoldsTheMetrics) {
  Metrics m = Compute({{"level1", "relu", VerdictStatus::kOk, 2.0, std::nullopt, ""},
                       {"level1", "relu", VerdictStatus::kCheat, std::nullopt, std::nullopt, ""}},
                      {.k = 2});
  RunInfo info;
  info.model = "m";
  info.started_at = "2026-12-01T00:00:00Z";
  info.backend = "cpu";
  store::RunRow r = RunRowOf(m, info);
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.k, 2);
  EXPECT_EQ(r.overall["pass_at_1"], 0.5);
  EXPECT_EQ(r.results["run"]["model"], "m");
  EXPECT_EQ(r.results["overall"], r.overall);
}

}  // namespace
}  // namespace kf::bench
