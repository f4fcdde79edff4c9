#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include "store/store.h"

namespace kf::store {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class RunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("kf_runs_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Store> MustOpen() {
    auto s = Store::Open(dir_ / "kforge.db");
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  fs::path dir_;
};

RunSampleRow Sample(const std::string& problem, int index, const std::string& status,
                    std::optional<double> speedup, const std::string& cand) {
  RunSampleRow r;
  r.level = "level1";
  r.problem = problem;
  r.problem_id = "level1/" + problem;
  r.index = index;
  r.sample_path = "samples/level1/" + problem + "/sample_" + std::to_string(index) + ".py";
  r.verdict_key = "key-" + cand;
  r.problem_hash = "ph-" + problem;
  r.candidate_hash = cand;
  r.status = status;
  r.reward = status == "ok" ? 1.0 : -1.0;
  r.speedup_vs_eager = speedup;
  return r;
}

RunRow MakeRun(const std::string& model) {
  RunRow r;
  r.model = model;
  r.started_at = "2026-12-01T10:00:00Z";
  r.backend = "cpu";
  r.device = "test cpu";
  r.k = 2;
  r.overall = {{"pass_at_1", 0.5}};
  r.results = {{"k", 2}, {"run", {{"lanes", 1}}}};
  return r;
}

TEST_F(RunsTest, RecordAndReadBack) {
  auto st = MustOpen();
  ASSERT_TRUE(st);
  std::vector<RunSampleRow> samples = {Sample("relu", 1, "cheat", std::nullopt, "c2"),
                                       Sample("relu", 0, "ok", 1.5, "c1"),
                                       Sample("gelu", 0, "incorrect", std::nullopt, "c3")};
  ASSERT_TRUE(st->PutTexts({{"c1", "text one"}, {"ph-relu", "problem"}}).ok());
  auto id = st->RecordRun(MakeRun("model-a"), samples);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, 1);

  auto run = st->GetRun(*id);
  ASSERT_TRUE(run.ok() && run->has_value());
  EXPECT_EQ((*run)->model, "model-a");
  EXPECT_EQ((*run)->samples, 3);
  EXPECT_EQ((*run)->k, 2);
  EXPECT_EQ((*run)->results["run"]["lanes"], 1);
  EXPECT_GT((*run)->recorded_at_ms, 0);

  auto rows = st->RunSamples(*id);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);  // by problem id, then index
  EXPECT_EQ((*rows)[0].problem_id, "level1/gelu");
  EXPECT_EQ((*rows)[1].index, 0);
  EXPECT_EQ((*rows)[1].speedup_vs_eager, 1.5);
  EXPECT_EQ((*rows)[2].status, "cheat");
  EXPECT_FALSE((*rows)[2].speedup_vs_eager.has_value());

  auto text = st->GetText("c1");
  ASSERT_TRUE(text.ok() && text->has_value());
  EXPECT_EQ(**text, "text one");
  auto none = st->GetText("c9");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto missing = st->GetRun(42);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_F(RunsTest, ListsNewestFirstWithoutResults) {
  auto st = MustOpen();
  ASSERT_TRUE(st);
  for (const char* m : {"a", "b", "c"}) {
    ASSERT_TRUE(st->RecordRun(MakeRun(m), {Sample("relu", 0, "ok", 1.0, "x")}).ok());
  }
  auto runs = st->ListRuns(2);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].model, "c");
  EXPECT_EQ((*runs)[1].model, "b");
  EXPECT_EQ((*runs)[0].overall["pass_at_1"], 0.5);
  EXPECT_TRUE((*runs)[0].results.is_null());
}

TEST_F(RunsTest, ProblemsAndLeaderboardAcrossRuns) {
  auto st = MustOpen();
  ASSERT_TRUE(st);
  ASSERT_TRUE(st->RecordRun(MakeRun("slow-model"), {Sample("relu", 0, "ok", 1.2, "a"),
                                                    Sample("relu", 1, "cheat", 50.0, "b"),
                                                    Sample("gelu", 0, "ok", std::nullopt, "c")})
                  .ok());
  ASSERT_TRUE(st->RecordRun(MakeRun("fast-model"), {Sample("relu", 0, "ok", 3.0, "d"),
                                                    Sample("relu", 1, "ok", std::nullopt, "e")})
                  .ok());
  auto problems = st->ListProblems();
  ASSERT_TRUE(problems.ok());
  ASSERT_EQ(problems->size(), 2u);
  const ProblemRow& relu = (*problems)[1];
  EXPECT_EQ(relu.problem_id, "level1/relu");
  EXPECT_EQ(relu.runs, 2);
  EXPECT_EQ(relu.samples, 4);
  EXPECT_EQ(relu.correct, 3);
  EXPECT_EQ(relu.best_speedup_vs_eager, 3.0);  // the cheat's 50x is not a kernel's speed

  auto board = st->ProblemSamples("level1/relu", 10);
  ASSERT_TRUE(board.ok());
  ASSERT_EQ(board->size(), 4u);
  EXPECT_EQ((*board)[0].candidate_hash, "d");  // ok, fastest
  EXPECT_EQ((*board)[0].model, "fast-model");
  EXPECT_EQ((*board)[1].candidate_hash, "a");
  EXPECT_EQ((*board)[2].candidate_hash, "e");  // ok without a speedup after those with one
  EXPECT_EQ((*board)[3].status, "cheat");
  auto top = st->ProblemSamples("level1/relu", 1);
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->size(), 1u);
}

TEST_F(RunsTest, TextsAreKeptOnce) {
  auto st = MustOpen();
  ASSERT_TRUE(st);
  ASSERT_TRUE(st->PutTexts({{"h", "first"}, {"g", "other"}}).ok());
  ASSERT_TRUE(st->PutTexts({{"h", "second"}}).ok());
  auto t = st->GetText("h");
  ASSERT_TRUE(t.ok() && t->has_value());
  EXPECT_EQ(**t, "first");
}

// A run is recorded whole or not at all: when its samples cannot be written, the run's row
// goes too (here the samples' table is gone under the store).
TEST_F(RunsTest, ARunWhoseSamplesFailLeavesNoRow) {
  auto st = MustOpen();
  ASSERT_TRUE(st);
  ASSERT_TRUE(st->RecordRun(MakeRun("kept"), {Sample("relu", 0, "ok", 1.0, "x")}).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "kforge.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE run_samples", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto id = st->RecordRun(MakeRun("lost"), {Sample("relu", 0, "ok", 1.0, "y")});
  EXPECT_FALSE(id.ok());
  auto runs = st->ListRuns(10);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].model, "kept");
}

}  // namespace
}  // namespace kf::store
