#include <gtest/gtest.h>

#include <mutex>
#include <set>

#include "agent/agent.h"

namespace kf::agent {
namespace {

using nlohmann::json;

// Answers every request with the next scripted reply, whatever the sample.
class ScriptTransport : public model::HttpTransport {
 public:
  std::mutex mu;
  std::vector<std::string> replies;
  size_t next = 0;
  std::vector<json> requests;
  Result<model::HttpResponse> Post(
      const std::string&, const std::string& body,
      const std::vector<std::pair<std::string, std::string>>&) override {
    std::lock_guard<std::mutex> g(mu);
    requests.push_back(json::parse(body));
    if (next >= replies.size()) return Status::Unavailable("connection refused");
    json msg = {{"role", "assistant"}, {"content", replies[next++]}};
    return model::HttpResponse{200, json{{"choices", {{{"message", msg}}}}}.dump()};
  }
  std::string Describe() const override { return "script"; }
};

std::string Reply(const std::string& tag) {
  return "Here:\n```python\nclass ModelNew:  # " + tag + "\n    pass\n```\n";
}

// A fake verifier: the tag in the code decides the verdict.
Verdict FakeEvaluate(const std::string& code) {
  Verdict v;
  if (code.find("bad") != std::string::npos) {
    v.status = VerdictStatus::kCompileError;
    v.reward = -1;
    v.feedback = "error: bad thing on line 1";
  } else if (code.find("fast") != std::string::npos) {
    v.status = VerdictStatus::kOk;
    v.reward = 1.5;
    v.speedup_vs_eager = 2.0;
  } else {
    v.status = VerdictStatus::kOk;
    v.reward = 1.0;
    v.speedup_vs_eager = 1.0;
  }
  return v;
}

PromptTemplates Templates() {
  return {"sys", "task {{problem_id}}", "prev:\n{{previous_candidate}}\nfb: {{feedback}}", "fmt"};
}

struct Fixture {
  ScriptTransport* script;
  model::ModelClient client;
  Fixture()
      : script(new ScriptTransport),
        client(Opts(), std::unique_ptr<model::HttpTransport>(script),
               [](std::chrono::milliseconds) {}) {}
  static model::ClientOptions Opts() {
    model::ClientOptions o;
    o.max_attempts = 1;
    return o;
  }
};

TEST(Generate, RepairsUntilPassAndScoresTheTrajectory) {
  Fixture f;
  f.script->replies = {Reply("bad"), Reply("ok")};
  GenerateOptions opt;
  opt.samples = 1;
  opt.turns = 3;
  std::vector<int> turns_seen;
  Callbacks cb;
  cb.on_turn = [&](const Turn& t) { turns_seen.push_back(t.turn); };
  auto r = Generate(opt, Templates(), ProblemContext{"p", "", "", "cpu", "cpu"}, f.client,
                    FakeEvaluate, cb);
  ASSERT_TRUE(r.model_error.ok());
  ASSERT_EQ(r.trajectories.size(), 1u);
  const Trajectory& tr = r.trajectories[0];
  ASSERT_EQ(tr.turns.size(), 2u);
  EXPECT_EQ(turns_seen, (std::vector<int>{1, 2}));
  EXPECT_EQ(tr.stop_reason, "passed");
  EXPECT_EQ(tr.first_pass_turn, 2);
  EXPECT_EQ(tr.rewards, (std::vector<double>{-1.0, 1.0}));
  EXPECT_DOUBLE_EQ(tr.prime_echo, score::PrimeEcho({-1.0, 1.0}, 2));
  EXPECT_EQ(tr.turns[0].candidate, "class ModelNew:  # bad\n    pass\n");
  // The second prompt carries the previous candidate and its feedback.
  const std::string& second = tr.turns[1].messages.at(1).content;
  EXPECT_NE(second.find("prev:\nclass ModelNew:  # bad"), std::string::npos) << second;
  EXPECT_NE(second.find("fb: error: bad thing on line 1"), std::string::npos) << second;
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best->turn, 2);
  json line = TurnJson(tr.turns[1]);
  EXPECT_EQ(line["status"], "ok");
  EXPECT_EQ(line["reward"], 1.0);
  EXPECT_EQ(TrajectoryJson(tr)["first_pass_turn"], 2);
}

TEST(Generate, OptimizeUntilKeepsGoingAndPicksTheFastest) {
  Fixture f;
  f.script->replies = {Reply("ok"), Reply("bad"), Reply("fast")};
  GenerateOptions opt;
  opt.samples = 1;
  opt.turns = 4;
  opt.optimize_until = 1.8;
  auto r = Generate(opt, Templates(), ProblemContext{}, f.client, FakeEvaluate);
  const Trajectory& tr = r.trajectories.at(0);
  EXPECT_EQ(tr.turns.size(), 3u);
  EXPECT_EQ(tr.stop_reason, "target_reached");
  EXPECT_EQ(tr.best_turn, 3);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best->turn, 3);
  EXPECT_NE(r.best->candidate.find("fast"), std::string::npos);
}

TEST(Generate, ModelFailureStopsEverySampleWithTheCause) {
  Fixture f;  // no replies: every call fails to connect
  GenerateOptions opt;
  opt.samples = 3;
  opt.turns = 3;
  auto r = Generate(opt, Templates(), ProblemContext{}, f.client, FakeEvaluate);
  ASSERT_FALSE(r.model_error.ok());
  EXPECT_NE(r.model_error.message().find("connection refused"), std::string::npos);
  EXPECT_FALSE(r.best.has_value());
  for (const auto& tr : r.trajectories) {
    EXPECT_LE(tr.turns.size(), 1u);
    EXPECT_TRUE(tr.stop_reason == "model_error" || tr.stop_reason == "aborted") << tr.stop_reason;
  }
}

TEST(Generate, InitialCandidateIsTurnZeroAndSeedsDifferPerSample) {
  Fixture f;
  f.script->replies = {Reply("fast"), Reply("fast")};
  GenerateOptions opt;
  opt.samples = 2;
  opt.turns = 2;
  opt.sampling.seed = 10;
  opt.initial_candidate = "class ModelNew:  # bad\n";
  auto r = Generate(opt, Templates(), ProblemContext{}, f.client, FakeEvaluate);
  for (const auto& tr : r.trajectories) {
    ASSERT_EQ(tr.turns.size(), 2u);
    EXPECT_EQ(tr.turns[0].turn, 0);
    EXPECT_TRUE(tr.turns[0].messages.empty());
    EXPECT_EQ(tr.rewards.size(), 1u);  // turn 0 is not the model's
    EXPECT_EQ(tr.first_pass_turn, 1);
    EXPECT_NE(tr.turns[1].messages.at(1).content.find("# bad"), std::string::npos);
  }
  std::set<int64_t> seeds;
  for (const auto& req : f.script->requests) seeds.insert(req["seed"].get<int64_t>());
  EXPECT_EQ(seeds, (std::set<int64_t>{10, 11}));
}

}  // namespace
}  // namespace kf::agent
