#include "serve/rl_routes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

namespace kf::serve {
namespace {
using nlohmann::json;
using queue::JobView;
namespace fs = std::filesystem;

// Candidates name their outcome: "ok:<reward>", "fail:<status>:<reward>", "infra", "pending".
JobView ViewFor(const std::string& candidate) {
  JobView v;
  if (candidate == "pending") {
    v.state = JobView::State::kRunning;
    return v;
  }
  v.state = JobView::State::kDone;
  Verdict vd;
  if (candidate == "infra") {
    vd.status = VerdictStatus::kInfraError;
  } else if (candidate.rfind("ok:", 0) == 0) {
    vd.status = VerdictStatus::kOk;
    vd.reward = std::stod(candidate.substr(3));
  } else {
    auto colon = candidate.find(':', 5);
    StatusFromName(candidate.substr(5, colon - 5), &vd.status);
    vd.reward = std::stod(candidate.substr(colon + 1));
  }
  v.result = queue::JobResult{vd, "fake", 1};
  return v;
}

class FakeEvaluations : public Evaluations {
 public:
  Result<std::vector<JobView>> Run(const std::vector<ItemRequest>& items, Clock::time_point,
                                   std::vector<std::string>* ids) override {
    ++runs;
    std::vector<JobView> out;
    for (const auto& it : items) {
      if (it.problem == "unknown") return Status::NotFound("unknown problem in " + it.field);
      submitted.push_back(it.candidate);
      ids->push_back("id-" + it.candidate);
      out.push_back(ViewFor(it.candidate));
    }
    return out;
  }
  // As the service: an unknown problem refuses its sample alone; a faulted sample is not run.
  Result<std::vector<JobView>> RunEach(std::vector<ItemRequest>* items, Clock::time_point,
                                       std::vector<std::string>* ids) override {
    ++runs;
    for (auto& it : *items) {
      if (!it.fault && it.problem == "unknown") {
        it.fault = SampleFault{SampleFault::Kind::kRefused,
                               Status::NotFound("unknown problem in " + it.field)};
      }
    }
    if (auto s = AllRefused(*items); !s.ok()) return s;
    std::vector<JobView> out;
    for (const auto& it : *items) {
      if (!Evaluates(it)) {
        ids->push_back("");
        out.push_back(Unevaluated(queue::JobSpec{}, it));
        continue;
      }
      submitted.push_back(it.candidate);
      ids->push_back("id-" + it.candidate);
      out.push_back(ViewFor(it.candidate));
    }
    return out;
  }
  Result<JobView> Await(const std::string& id, Clock::time_point) override {
    auto it = known.find(id);
    if (it == known.end()) return Status::NotFound("no evaluation with id '" + id + "'");
    return ViewFor(it->second);
  }
  int runs = 0;
  std::vector<std::string> submitted;
  std::map<std::string, std::string> known;  // id -> candidate
};

class RlRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kf_rl_routes_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    auto st = store::Store::Open(dir_ / "kforge.db");
    ASSERT_TRUE(st.ok());
    bdr_ = std::make_unique<Bdr>(BdrOptions{.capacity = 8, .replay_prob = 1, .seed = 3},
                                 MakeSqliteReplay(std::move(st.value())));
    routes_ = std::make_unique<RlRoutes>(limits_, prime_echo_, &ev_, bdr_.get());
  }
  void TearDown() override { fs::remove_all(dir_); }

  ApiLimits limits_;
  score::PrimeEchoOptions prime_echo_;
  FakeEvaluations ev_;
  fs::path dir_;
  std::unique_ptr<Bdr> bdr_;
  std::unique_ptr<RlRoutes> routes_;
};

TEST_F(RlRoutesTest, GroupsAnswerStatsAndFeedBdr) {
  json body = {{"groups",
                {{{"problem", "level1/relu"},
                  {"prompt", "mixed"},
                  {"candidates", {"ok:1.5", "fail:incorrect:-0.5", "fail:compile_error:-1"}}},
                 {{"problem", "level1/relu"},
                  {"prompt", "hard"},
                  {"metadata", {{"index", 4}}},
                  {"group_id", "g-hard"},
                  {"candidates", {"fail:format_error:-1", "fail:cheat:-1"}}},
                 {{"problem", "level1/relu"},
                  {"prompt", "unsure"},
                  {"candidates", {"fail:timeout:-1", "infra"}}}}}};
  auto out = routes_->Groups(body, Clock::now());
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(ev_.runs, 1);  // every sample of every group in one submission
  EXPECT_EQ(ev_.submitted.size(), 7u);
  const json& g = (*out)["groups"];
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0]["rewards"], json({1.5, -0.5, -1.0}));
  EXPECT_DOUBLE_EQ(g[0]["stats"]["mean"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(g[0]["stats"]["std"].get<double>(), std::sqrt((2.25 + 0.25 + 1) / 2));
  EXPECT_EQ(g[0]["stats"]["pass_count"], 1);
  EXPECT_EQ(g[0]["all_failed"], false);
  EXPECT_EQ(g[0]["results"][0]["id"], "id-ok:1.5");
  EXPECT_EQ(g[1]["all_failed"], true);
  EXPECT_EQ(g[1]["bdr_recorded"], true);
  EXPECT_EQ(g[1]["group_id"], "g-hard");
  EXPECT_EQ(g[1]["advantages"], json({0.0, 0.0}));
  // A sample without a reward: not all-failed, and its reward and advantage are null.
  EXPECT_EQ(g[2]["all_failed"], false);
  EXPECT_TRUE(g[2]["rewards"][1].is_null());
  EXPECT_TRUE(g[2]["advantages"][1].is_null());

  auto sample = routes_->BdrSample("3", std::nullopt);
  ASSERT_TRUE(sample.ok()) << sample.status().message();
  ASSERT_EQ((*sample)["replay"].size(), 1u);
  EXPECT_EQ((*sample)["replay"][0]["prompt"], "hard");
  EXPECT_EQ((*sample)["replay"][0]["metadata"]["index"], 4);
  EXPECT_EQ((*sample)["replay"][0]["group_id"], "g-hard");
  EXPECT_EQ((*sample)["fresh"], 2);
  EXPECT_EQ((*sample)["buffered"], 0);

  const std::string m = routes_->Metrics();
  EXPECT_NE(m.find("kforge_groups_total 3"), std::string::npos) << m;
  EXPECT_NE(m.find("kforge_group_samples_total 7"), std::string::npos);
  EXPECT_NE(m.find("kforge_groups_all_failed_total 1"), std::string::npos);
  EXPECT_NE(m.find("kforge_bdr_recorded_total 1"), std::string::npos);
  EXPECT_NE(m.find("kforge_bdr_replayed_total 1"), std::string::npos);
  EXPECT_NE(m.find("kforge_bdr_groups 0"), std::string::npos);
}

TEST_F(RlRoutesTest, ARequestWithNothingToEvaluateIsRefusedWhole) {
  auto out = routes_->Groups({{"problem", "unknown"}, {"candidates", {"ok:1"}}}, Clock::now());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kNotFound);
  auto none = routes_->Groups({{"candidates", {"ok:1"}}}, Clock::now());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("exactly one of 'problem'"), std::string::npos);
  auto no_list = routes_->Groups({{"groups", {{{"problem", "p"}, {"candidates", "ok:1"}}}}},
                                 Clock::now());
  ASSERT_FALSE(no_list.ok());
  EXPECT_NE(no_list.status().message().find("'groups[0].candidates' must be a list"),
            std::string::npos);
  EXPECT_TRUE(ev_.submitted.empty());
}

// A trainer's step must not lose every reward to one bad group or sample: each bad one is
// answered in its place, with no reward (the request's fault) or -1 (an answer over the limit,
// the model's), and the rest are evaluated and normalised as usual.
TEST_F(RlRoutesTest, OneBadGroupOrSampleFailsItselfAlone) {
  limits_.max_candidate_bytes = 20;
  json body = {{"groups",
                {{{"problem", "level1/relu"},
                  {"group_id", "good"},
                  {"candidates", {"ok:1.5", 7, std::string(21, 'x'), "fail:incorrect:-0.5"}}},
                 {{"problem", "unknown"}, {"group_id", "unknown"}, {"candidates", {"ok:1", "ok:2"}}},
                 {{"problem", "level1/relu"}, {"prompt", 5}, {"candidates", {"fail:cheat:-1"}}},
                 {{"problem", "level1/relu"}, {"group_id", "no-list"}, {"candidates", "ok:1"}},
                 {{"problem", "level1/relu"},
                  {"prompt", "p"},
                  {"candidates", {"fail:cheat:-1", "fail:timeout:-1"}}}}}};
  auto out = routes_->Groups(body, Clock::now());
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(ev_.submitted, (std::vector<std::string>{"ok:1.5", "fail:incorrect:-0.5",
                                                     "fail:cheat:-1", "fail:timeout:-1"}));
  const json& g = (*out)["groups"];
  ASSERT_EQ(g.size(), 5u);
  // The bad samples in place: a number refused (null), 21 bytes a format_error (-1).
  EXPECT_EQ(g[0]["rewards"], json({1.5, nullptr, -1.0, -0.5}));
  EXPECT_EQ(g[0]["stats"]["rewarded"], 3);
  EXPECT_TRUE(g[0]["advantages"][1].is_null());
  EXPECT_EQ(g[0]["results"][1]["state"], "refused");
  EXPECT_NE(g[0]["results"][1]["error"].get<std::string>().find("groups[0].candidates[1]"),
            std::string::npos);
  EXPECT_EQ(g[0]["results"][2]["status"], "format_error");
  EXPECT_FALSE(g[0].contains("error"));
  // Whole groups refused: an unknown problem, a wrong prompt, candidates that are no list.
  EXPECT_EQ(g[1]["rewards"], json({nullptr, nullptr}));
  EXPECT_NE(g[1]["error"].get<std::string>().find("unknown problem"), std::string::npos);
  EXPECT_EQ(g[1]["group_id"], "unknown");
  EXPECT_EQ(g[2]["rewards"], json({nullptr}));
  EXPECT_NE(g[2]["error"].get<std::string>().find("'groups[2].prompt' must be a string"),
            std::string::npos);
  EXPECT_EQ(g[3]["rewards"], json::array());
  EXPECT_EQ(g[3]["group_id"], "no-list");
  EXPECT_NE(g[3]["error"].get<std::string>().find("must be a list"), std::string::npos);
  for (int i : {1, 2, 3}) {
    EXPECT_EQ(g[i]["all_failed"], false) << i;
    EXPECT_EQ(g[i]["bdr_recorded"], false) << i;
    EXPECT_TRUE(g[i]["stats"]["mean"].is_null()) << i;
  }
  // The last group is all-failed and recorded as usual; the refused ones were not.
  EXPECT_EQ(g[4]["all_failed"], true);
  EXPECT_EQ(g[4]["bdr_recorded"], true);
  auto size = bdr_->Size();
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 1);
}

TEST_F(RlRoutesTest, BdrSampleQueryIsStrict) {
  for (const char* n : {"", "0", "-1", "abc", "2.0", "4097", "99999999999999"}) {
    auto r = routes_->BdrSample(std::string(n), std::nullopt);
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << n;
  }
  EXPECT_FALSE(routes_->BdrSample(std::nullopt, std::nullopt).ok());
  for (const char* p : {"2", "-0.1", "nan", "inf", "x"}) {
    EXPECT_FALSE(routes_->BdrSample("1", std::string(p)).ok()) << p;
  }
  auto ok = routes_->BdrSample("4096", std::string("0"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)["fresh"], 4096);
}

TEST_F(RlRoutesTest, TrajectoryRewardFromAllThreeTurnForms) {
  ev_.known["job-1"] = "fail:incorrect:-0.25";
  json body = {{"trajectories",
                {{{"problem", "level1/relu"},
                  {"trajectory_id", "t0"},
                  {"turns", {{{"id", "job-1"}}, {{"candidate", "ok:1.0"}}}}},
                 {{"turns", {{{"reward", 1.2}, {"status", "ok"}}}}},
                 {{"problem", "level1/relu"},
                  {"turns", {{{"candidate", "infra"}}, {{"reward", 1}, {"passed", true}}}}}}}};
  auto out = routes_->TrajectoryReward(body, Clock::now());
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(ev_.runs, 1);
  // 0.75 * -0.25 + 0.25 * 1 + 0.1 (passed at turn 2) = 0.1625
  const json& t = (*out)["trajectories"];
  EXPECT_DOUBLE_EQ(t[0]["reward"].get<double>(), 0.1625);
  EXPECT_EQ(t[0]["first_pass_turn"], 2);
  EXPECT_EQ(t[0]["trajectory_id"], "t0");
  EXPECT_EQ(t[0]["turns"][0]["id"], "job-1");
  EXPECT_EQ(t[0]["turns"][0]["status"], "incorrect");
  EXPECT_EQ(t[0]["turns"][1]["passed"], true);
  EXPECT_DOUBLE_EQ(t[1]["reward"].get<double>(), 1.4);  // 1.2 + 0.2
  EXPECT_TRUE(t[2]["reward"].is_null());
  EXPECT_EQ(t[2]["missing_turns"], json({1}));
  EXPECT_EQ((*out)["rewards"].size(), 3u);
  EXPECT_DOUBLE_EQ((*out)["options"]["alpha"].get<double>(), 0.75);
}

TEST_F(RlRoutesTest, AnUnknownIdRefusesBeforeAnythingRuns) {
  auto out = routes_->TrajectoryReward(
      {{"problem", "level1/relu"}, {"turns", {{{"candidate", "ok:1"}}, {{"id", "nope"}}}}},
      Clock::now());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kNotFound);
  EXPECT_NE(out.status().message().find("turns[1].id"), std::string::npos);
  EXPECT_EQ(ev_.runs, 0);
}

TEST_F(RlRoutesTest, ServiceDefaultsApplyUnlessTheRequestSetsThem) {
  prime_echo_.alpha = 0.5;
  json body = {
      {"turns", {{{"reward", 0.0}, {"passed", false}}, {{"reward", 2.0}, {"passed", true}}}}};
  EXPECT_DOUBLE_EQ((*routes_->TrajectoryReward(body, Clock::now()))["rewards"][0].get<double>(),
                   0.5 * 0 + 0.5 * 2 + 0.1);
  body["alpha"] = 1.0;
  EXPECT_DOUBLE_EQ((*routes_->TrajectoryReward(body, Clock::now()))["rewards"][0].get<double>(),
                   0.1);
}

}  // namespace
}  // namespace kf::serve
