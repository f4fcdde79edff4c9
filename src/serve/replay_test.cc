#include "serve/replay.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace kf::serve {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

GroupRequest Group(std::string problem, std::string prompt) {
  GroupRequest g;
  g.problem = std::move(problem);
  g.prompt = std::move(prompt);
  g.candidates = {"a", "b"};
  g.metadata = {{"index", 3}};
  return g;
}

GroupStats Failed() { return ComputeGroupStats({{-1.0, false}, {-0.5, false}}); }

class BdrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kf_bdr_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<ReplayStorage> Storage() {
    auto st = store::Store::Open(dir_ / "kforge.db");
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    return MakeSqliteReplay(std::shared_ptr<store::Store>(std::move(st.value())));
  }

  fs::path dir_;
};

TEST_F(BdrTest, RecordsOnlyAllFailedGroupsAndSurvivesReopen) {
  {
    Bdr bdr(BdrOptions{.capacity = 10, .replay_prob = 1, .seed = 1}, Storage());
    EXPECT_TRUE(*bdr.Record(Group("level1/relu", "P1"), Failed()));
    EXPECT_FALSE(
        *bdr.Record(Group("level1/relu", "P2"), ComputeGroupStats({{-1.0, false}, {1.0, true}})));
    EXPECT_FALSE(*bdr.Record(Group("level1/relu", "P3"),
                             ComputeGroupStats({{-1.0, false}, {std::nullopt, false}})));
    EXPECT_TRUE(*bdr.Record(Group("level1/relu", "P4"), Failed()));
    EXPECT_EQ(bdr.counts().recorded, 2);
  }
  Bdr bdr(BdrOptions{.capacity = 10, .replay_prob = 1, .seed = 1}, Storage());
  EXPECT_EQ(*bdr.Size(), 2);
  auto s = bdr.Draw(5, std::nullopt);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->replay.size(), 2u);
  EXPECT_EQ(s->fresh, 3);
  json first = ReplayEntryJson(s->replay[0]);
  EXPECT_EQ(first["problem"], "level1/relu");
  EXPECT_EQ(first["prompt"], "P1");
  EXPECT_EQ(first["metadata"]["index"], 3);
  EXPECT_EQ(first["samples"], 2);
  EXPECT_EQ(first["best_reward"], -0.5);
  EXPECT_EQ(first["failures"], 1);
  EXPECT_EQ(ReplayEntryJson(s->replay[1])["prompt"], "P4");
  EXPECT_EQ(bdr.counts().replayed, 2);
  EXPECT_EQ(*bdr.Size(), 0);
}

TEST_F(BdrTest, RepeatsAndCapacity) {
  Bdr bdr(BdrOptions{.capacity = 2, .replay_prob = 1, .seed = 1}, Storage());
  ASSERT_TRUE(bdr.Record(Group("p", "A"), Failed()).ok());
  ASSERT_TRUE(bdr.Record(Group("p", "B"), Failed()).ok());
  ASSERT_TRUE(bdr.Record(Group("p", "A"), Failed()).ok());  // a repeat: one entry, 2 failures
  EXPECT_EQ(*bdr.Size(), 2);
  ASSERT_TRUE(bdr.Record(Group("p", "C"), Failed()).ok());  // A, the oldest, goes
  EXPECT_EQ(bdr.counts().evicted, 1);
  EXPECT_EQ(bdr.counts().recorded, 4);
  auto s = bdr.Draw(2, std::nullopt);
  ASSERT_EQ(s->replay.size(), 2u);
  EXPECT_EQ(s->replay[0].value["prompt"], "B");
  EXPECT_EQ(s->replay[1].value["prompt"], "C");
  // Another problem with the same prompt is another entry.
  EXPECT_NE(ReplayKey(Group("p", "A")), ReplayKey(Group("q", "A")));
  EXPECT_EQ(ReplayKey(Group("p", "A")), ReplayKey(Group("p", "A")));
}

TEST_F(BdrTest, OffRecordsNothing) {
  Bdr bdr(BdrOptions{.capacity = 0}, Storage());
  EXPECT_FALSE(*bdr.Record(Group("p", "A"), Failed()));
  EXPECT_EQ(*bdr.Size(), 0);
}

TEST_F(BdrTest, ProbabilityDecidesTheSlots) {
  Bdr bdr(BdrOptions{.capacity = 100, .replay_prob = 0.25, .seed = 7}, Storage());
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(bdr.Record(Group("p", std::to_string(i)), Failed()).ok());
  auto none = bdr.Draw(10, 0.0);
  EXPECT_TRUE(none->replay.empty());
  EXPECT_EQ(none->fresh, 10);
  auto all = bdr.Draw(4, 1.0);
  EXPECT_EQ(all->replay.size(), 4u);
  EXPECT_EQ(all->replay[0].value["prompt"], "0");  // oldest first
  EXPECT_FALSE(bdr.Draw(0, std::nullopt).ok());
  EXPECT_FALSE(bdr.Draw(3, 1.5).ok());
}

TEST(ReplaySlotsTest, Binomial) {
  std::mt19937_64 rng(42);
  EXPECT_EQ(ReplaySlots(10, 0, rng), 0);
  EXPECT_EQ(ReplaySlots(10, 1, rng), 10);
  long long total = 0;
  for (int i = 0; i < 2000; ++i) {
    const int64_t k = ReplaySlots(8, 0.25, rng);
    ASSERT_GE(k, 0);
    ASSERT_LE(k, 8);
    total += k;
  }
  // Mean 2 per draw: 4000 expected, std of the total about 55.
  EXPECT_NEAR(static_cast<double>(total), 4000.0, 400.0);
}

}  // namespace
}  // namespace kf::serve
