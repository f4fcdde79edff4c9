#include "serve/trajectory.h"

#include <gtest/gtest.h>

namespace kf::serve {
namespace {
using nlohmann::json;

TEST(ParseTrajectoriesTest, TheThreeTurnFormsAndOptions) {
  auto b = ParseTrajectories(json{{"problem", "level1/relu"},
                                  {"alpha", 0.5},
                                  {"bonus_turn2", 0.3},
                                  {"turns",
                                   {{{"candidate", "c1"}},
                                    {{"id", "abc"}},
                                    {{"reward", 1.5}, {"status", "ok"}},
                                    {{"reward", -1}, {"passed", false}}}}},
                             ApiLimits{}, score::PrimeEchoOptions{});
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_DOUBLE_EQ(b->options.alpha, 0.5);
  EXPECT_DOUBLE_EQ(b->options.bonus_turn1, 0.2);  // the default, not overridden
  EXPECT_DOUBLE_EQ(b->options.bonus_turn2, 0.3);
  const auto& t = b->trajectories[0].turns;
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].kind, TurnRequest::Kind::kCandidate);
  EXPECT_EQ(t[1].kind, TurnRequest::Kind::kId);
  EXPECT_EQ(t[1].id, "abc");
  EXPECT_EQ(t[2].kind, TurnRequest::Kind::kReward);
  EXPECT_TRUE(t[2].passed);
  EXPECT_FALSE(t[3].passed);
  auto items = CandidateItems(b->trajectories);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].problem, "level1/relu");
  EXPECT_EQ(items[0].field, "turns[0]");
}

TEST(ParseTrajectoriesTest, StrictErrors) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"turns", json::array()}}, "'turns' is empty"},
      {{{"turn", {{{"reward", 1}, {"passed", true}}}}}, "'turns' is required"},
      {{{"turns", {{{"candidate", "x"}}}}}, "needs 'problem'"},
      {{{"turns", {{{"candidate", "x"}, {"reward", 1}}}}}, "exactly one of 'candidate'"},
      {{{"turns", {json::object()}}}, "exactly one of 'candidate'"},
      {{{"turns", {{{"reward", "1"}, {"passed", true}}}}}, "'turns[0].reward' must be a finite"},
      {{{"turns", {{{"reward", 1}}}}}, "exactly one of 'status'"},
      {{{"turns", {{{"reward", 1}, {"status", "ok"}, {"passed", true}}}}}, "exactly one of"},
      {{{"turns", {{{"reward", 1}, {"status", "great"}}}}}, "must be a verdict status"},
      {{{"turns", {{{"reward", 0}, {"status", "infra_error"}}}}}, "infra_error"},
      {{{"turns", {{{"reward", 1}, {"passed", 1}}}}}, "true or false"},
      {{{"turns", {{{"id", 7}}}}}, "'turns[0].id' must be an evaluation id"},
      {{{"alpha", 1.5}, {"turns", {{{"reward", 1}, {"passed", true}}}}},
       "'alpha' must be a number"},
      {{{"bonus_turn1", -0.1}, {"turns", {{{"reward", 1}, {"passed", true}}}}}, "'bonus_turn1'"},
      {{{"trajectories", json::array()}}, "'trajectories' is empty"},
      {{{"trajectories", {{{"turns", {{{"reward", 1}, {"passed", true}}}}}, 5}}},
       "'trajectories[1]' must be a JSON object"},
  };
  for (const auto& [body, words] : cases) {
    auto r = ParseTrajectories(body, ApiLimits{}, score::PrimeEchoOptions{});
    ASSERT_FALSE(r.ok()) << body.dump();
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(words), std::string::npos)
        << body.dump() << " -> " << r.status().message();
  }
  json many = json::array();
  for (size_t i = 0; i <= kMaxTurns; ++i) many.push_back({{"reward", 1}, {"passed", true}});
  EXPECT_FALSE(ParseTrajectories({{"turns", many}}, ApiLimits{}, {}).ok());
}

// PrimeEcho worked out by hand (alpha 0.75, bonuses 0.2 / 0.1 unless set).
TEST(ScoreTrajectoryTest, HandComputed) {
  score::PrimeEchoOptions d;
  // 0.75 * -1 + 0.25 * 1.5, passed first at turn 3: no bonus.
  auto a = ScoreTrajectory({{-1.0, false}, {0.0, false}, {1.5, true}}, d);
  EXPECT_DOUBLE_EQ(*a.reward, -0.375);
  EXPECT_EQ(a.first_pass_turn, 3);
  // Passed at turn 1: 0.75 * 1.2 + 0.25 * 1.2 + 0.2.
  EXPECT_DOUBLE_EQ(*ScoreTrajectory({{1.2, true}}, d).reward, 1.4);
  // Passed at turn 2: 0.75 * -1 + 0.25 * 1 + 0.1.
  auto c = ScoreTrajectory({{-1.0, false}, {1.0, true}}, d);
  EXPECT_DOUBLE_EQ(*c.reward, -0.4);
  EXPECT_EQ(c.first_pass_turn, 2);
  // alpha 0.5, bonus 0.5 at turn 2: 0.5 * 0 + 0.5 * 2 + 0.5.
  score::PrimeEchoOptions o{.alpha = 0.5, .bonus_turn1 = 1, .bonus_turn2 = 0.5};
  EXPECT_DOUBLE_EQ(*ScoreTrajectory({{0.0, false}, {2.0, true}}, o).reward, 1.5);
  // The best turn counts even when it did not pass (partial credit): 0.75*-1 + 0.25*-0.25.
  EXPECT_DOUBLE_EQ(*ScoreTrajectory({{-1.0, false}, {-0.25, false}}, d).reward, -0.8125);
}

TEST(ScoreTrajectoryTest, AMissingTurnLeavesNoReward) {
  auto s = ScoreTrajectory({{-1.0, false}, {std::nullopt, false}, {1.0, true}}, {});
  EXPECT_FALSE(s.reward.has_value());
  EXPECT_EQ(s.missing_turns, std::vector<int>{2});
}

}  // namespace
}  // namespace kf::serve
