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

// Only the envelope refuses the request: the body not an object, no groups, too many candidates.
TEST(ParseGroupsTest, EnvelopeErrorsNameTheField) {
  ApiLimits lim;
  lim.max_items = 3;
  struct Case {
    json body;
    std::string words;
  };
  const std::vector<Case> cases = {
      {json::array(), "must be a JSON object"},
      {{{"groups", json::array()}}, "'groups' is empty"},
      {{{"groups", "a"}}, "'groups' must be a list"},
      {{{"groups",
         {{{"problem", "p"}, {"candidates", {"a", "b"}}},
          {{"problem", "p"}, {"candidates", {"c", "d"}}}}}},
       "more than 3 candidates"},
  };
  for (const auto& c : cases) {
    auto r = ParseGroups(c.body, lim);
    ASSERT_FALSE(r.ok()) << c.body.dump();
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.words), std::string::npos)
        << c.body.dump() << " -> " << r.status().message();
  }
}

// What is wrong with a group is its fault, naming the field; its candidates are refused with it.
TEST(ParseGroupsTest, AGroupsFaultNamesTheField) {
  ApiLimits lim;
  struct Case {
    json group;
    std::string words;
    size_t candidates;  // how many samples the group still answers
  };
  const std::vector<Case> cases = {
      {{{"candidates", {"a"}}}, "exactly one of 'groups[1].problem'", 1},
      {{{"problem", "p"}, {"problem_source", "s"}, {"candidates", {"a"}}}, "exactly one of", 1},
      {{{"problem", "p"}}, "'groups[1].candidates' is required", 0},
      {{{"problem", "p"}, {"candidates", "a"}}, "'groups[1].candidates' must be a list", 0},
      {{{"problem", "p"}, {"candidates", json::array()}}, "'groups[1].candidates' is empty", 0},
      {{{"problem", "p"}, {"candidates", {"a"}}, {"metadata", {1, 2}}}, "must be an object", 1},
      {{{"problem", "p"}, {"candidates", {"a", "b"}}, {"prompt", 3}},
       "'groups[1].prompt' must be a string", 2},
      {{{"problem", 1}, {"candidates", {"a"}}}, "'groups[1].problem' must be a string", 1},
      {{{"problem", "p"}, {"candidates", {"a"}}, {"metadata", {{"x", std::string(70000, 'a')}}}},
       "'groups[1].metadata' is larger than", 1},
      {json::array(), "'groups[1]' must be a JSON object", 0},
  };
  for (const auto& c : cases) {
    json body = {{"groups", {{{"problem", "ok"}, {"candidates", {"x"}}}, c.group}}};
    auto r = ParseGroups(body, lim);
    ASSERT_TRUE(r.ok()) << c.group.dump() << " -> " << r.status().message();
    ASSERT_EQ(r->size(), 2u);
    EXPECT_FALSE((*r)[0].fault.has_value());
    const GroupRequest& g = (*r)[1];
    ASSERT_TRUE(g.fault.has_value()) << c.group.dump();
    EXPECT_NE(g.fault->message().find(c.words), std::string::npos)
        << c.group.dump() << " -> " << g.fault->message();
    EXPECT_EQ(g.candidates.size(), c.candidates) << c.group.dump();
    auto items = GroupItems(*r);
    ASSERT_EQ(items.size(), 1 + c.candidates);
    EXPECT_FALSE(items[0].fault.has_value());
    for (size_t i = 1; i < items.size(); ++i) {
      ASSERT_TRUE(items[i].fault.has_value());
      EXPECT_EQ(items[i].fault->kind, SampleFault::Kind::kRefused);
      EXPECT_TRUE(items[i].candidate.empty());
    }
  }
}

// A candidate that is no string is refused; one over the limit is the model's format_error.
TEST(ParseGroupsTest, ABadCandidateIsItsOwnFault) {
  ApiLimits lim;
  lim.max_candidate_bytes = 4;
  auto r = ParseGroups(json{{"problem", "p"}, {"candidates", {"ab", 5, "toolong"}}}, lim);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE((*r)[0].fault.has_value());
  auto items = GroupItems(*r);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_FALSE(items[0].fault.has_value());
  EXPECT_EQ(items[0].candidate, "ab");
  ASSERT_TRUE(items[1].fault.has_value());
  EXPECT_EQ(items[1].fault->kind, SampleFault::Kind::kRefused);
  EXPECT_NE(items[1].fault->why.message().find("'candidates[1]' must be a string"),
            std::string::npos);
  ASSERT_TRUE(items[2].fault.has_value());
  EXPECT_EQ(items[2].fault->kind, SampleFault::Kind::kTooLong);
  EXPECT_NE(items[2].fault->why.message().find("'candidates[2]' is 7 bytes"), std::string::npos);
  EXPECT_TRUE(items[2].candidate.empty());
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
