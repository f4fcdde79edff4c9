#include "serve/groups.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kf::serve {
namespace {
using nlohmann::json;

TEST(ParseGroupsTest, SingleAndBatchForms) {
  ApiLimits lim;
  auto one = ParseGroups(json{{"problem", "level1/relu"},
                              {"candidates", {"a", "b"}},
                              {"prompt", "Write ReLU"},
                              {"metadata", {{"index", 7}}},
                              {"group_id", "g7"}},
                         lim);
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].field, "body");
  EXPECT_EQ((*one)[0].candidates, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ((*one)[0].prompt, "Write ReLU");
  EXPECT_EQ((*one)[0].metadata["index"], 7);
  EXPECT_EQ((*one)[0].group_id, "g7");

  auto two =
      ParseGroups(json{{"groups",
                        {{{"problem", "a"}, {"candidates", {"x"}}},
                         {{"problem_source", "class Model: ..."}, {"candidates", {"y", "z"}}}}}},
                  lim);
  ASSERT_TRUE(two.ok()) << two.status().message();
  ASSERT_EQ(two->size(), 2u);
  EXPECT_TRUE((*two)[1].problem.empty());
  EXPECT_TRUE((*two)[0].metadata.is_null());
  auto items = GroupItems(*two);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].candidate, "x");
  EXPECT_EQ(items[0].problem, "a");
  EXPECT_EQ(items[2].candidate, "z");
  EXPECT_EQ(items[2].problem_source, "class Model: ...");
  EXPECT_EQ(items[2].field, "groups[1].candidates[1]");
}

TEST(ParseGroupsTest, ErrorsNameTheField) {
  ApiLimits lim;
  lim.max_items = 3;
  struct Case {
    json body;
    std::string words;
  };
  const std::vector<Case> cases = {
      {json::array(), "must be a JSON object"},
      {{{"candidates", {"a"}}}, "exactly one of 'problem'"},
      {{{"problem", "p"}, {"problem_source", "s"}, {"candidates", {"a"}}}, "exactly one of"},
      {{{"problem", "p"}}, "'candidates' is required"},
      {{{"problem", "p"}, {"candidates", "a"}}, "'candidates' must be a list"},
      {{{"problem", "p"}, {"candidates", json::array()}}, "'candidates' is empty"},
      {{{"problem", "p"}, {"candidates", {"a", 5}}}, "'candidates[1]' must be a string"},
      {{{"problem", "p"}, {"candidates", {"a"}}, {"metadata", {1, 2}}}, "must be an object"},
      {{{"problem", "p"}, {"candidates", {"a"}}, {"prompt", 3}}, "'prompt' must be a string"},
      {{{"groups", json::array()}}, "'groups' is empty"},
      {{{"groups",
         {{{"problem", "p"}, {"candidates", {"a", "b"}}},
          {{"problem", "p"}, {"candidates", {"c", "d"}}}}}},
       "more than 3 candidates"},
      {{{"groups", {{{"problem", "p"}, {"candidates", {"a"}}}, {{"problem", 1}}}}},
       "'groups[1].problem' must be a string"},
  };
  for (const auto& c : cases) {
    auto r = ParseGroups(c.body, lim);
    ASSERT_FALSE(r.ok()) << c.body.dump();
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.words), std::string::npos)
        << c.body.dump() << " -> " << r.status().message();
  }
  auto big = ParseGroups(
      {{"problem", "p"}, {"candidates", {"a"}}, {"metadata", {{"x", std::string(70000, 'a')}}}},
      lim);
  EXPECT_FALSE(big.ok());
}

TEST(GroupStatsTest, HandComputed) {
  // Rewards 1, -1, -1, 0.5 (one passed): mean -0.125; squared deviations 1.265625 + 0.765625 * 2
  // + 0.390625 = 3.1875; sample variance 3.1875 / 3 = 1.0625, std 1.0307764...
  GroupStats s = ComputeGroupStats({{1.0, true}, {-1.0, false}, {-1.0, false}, {0.5, false}});
  EXPECT_EQ(s.n, 4u);
  EXPECT_EQ(s.rewarded, 4u);
  EXPECT_EQ(s.pass_count, 1u);
  EXPECT_DOUBLE_EQ(*s.mean, -0.125);
  const double sd = std::sqrt(1.0625);
  EXPECT_DOUBLE_EQ(*s.std, sd);
  EXPECT_DOUBLE_EQ(*s.min, -1.0);
  EXPECT_DOUBLE_EQ(*s.max, 1.0);
  ASSERT_EQ(s.advantages.size(), 4u);
  EXPECT_DOUBLE_EQ(*s.advantages[0], 1.125 / (sd + kAdvantageEps));
  EXPECT_DOUBLE_EQ(*s.advantages[1], -0.875 / (sd + kAdvantageEps));
  EXPECT_FALSE(s.all_failed);
}

TEST(GroupStatsTest, AllFailedNeedsEveryRewardAndNoPass) {
  GroupStats failed = ComputeGroupStats({{-1.0, false}, {-0.25, false}, {-1.0, false}});
  EXPECT_TRUE(failed.all_failed);
  EXPECT_EQ(failed.pass_count, 0u);
  // A sample without a reward (infra_error, or not done in time) might have passed.
  GroupStats missing = ComputeGroupStats({{-1.0, false}, {std::nullopt, false}});
  EXPECT_FALSE(missing.all_failed);
  EXPECT_EQ(missing.rewarded, 1u);
  EXPECT_DOUBLE_EQ(*missing.std, 0.0);  // one reward: std 0, advantage 0
  EXPECT_DOUBLE_EQ(*missing.advantages[0], 0.0);
  EXPECT_FALSE(missing.advantages[1].has_value());
  GroupStats none = ComputeGroupStats({{std::nullopt, false}});
  EXPECT_FALSE(none.mean.has_value());
  EXPECT_FALSE(none.all_failed);
  EXPECT_TRUE(GroupStatsJson(none)["mean"].is_null());
}

TEST(GroupStatsTest, EqualRewardsHaveZeroAdvantagesExactly) {
  GroupStats s = ComputeGroupStats({{1.1, true}, {1.1, true}, {1.1, true}});
  EXPECT_DOUBLE_EQ(*s.std, 0.0);
  for (const auto& a : s.advantages) EXPECT_EQ(*a, 0.0);
  EXPECT_FALSE(s.all_failed);
  EXPECT_EQ(s.pass_count, 3u);
}

}  // namespace
}  // namespace kf::serve
