#include "data/data.h"

#include <gtest/gtest.h>

#include <fstream>

#include "bench/metrics.h"
#include "similarity/similarity.h"

namespace kf::data {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

const std::string kTask = "Write a kernel for level1/relu.";

Sample Turn(int turn, VerdictStatus st, const std::string& code, std::optional<double> speedup,
            const std::string& problem = "level1/relu") {
  Sample s;
  s.origin = "t:" + std::to_string(turn);
  s.problem = problem;
  s.problem_hash = "h-" + problem;
  s.turn = turn;
  s.candidate = code;
  s.reply = "Here it is.\n```python\n" + code + "\n```";
  s.reasoning = "thinking " + std::to_string(turn);
  std::string user = turn <= 1 ? kTask : kTask + "\n\nTurn " + std::to_string(turn) + " feedback.";
  s.messages = {{"system", "You write kernels."}, {"user", user}};
  s.verdict.status = st;
  s.verdict.problem_id = problem;
  s.verdict.candidate_hash = "c-" + code;
  s.verdict.speedup_vs_eager = speedup;
  return s;
}

Sample BenchSample(VerdictStatus st, const std::string& code, std::optional<double> speedup,
                   const std::string& problem = "level1/relu") {
  Sample s = Turn(0, st, code, speedup, problem);
  s.reply.clear();
  s.reasoning.clear();
  s.messages.clear();
  s.problem_path = "/problems/" + problem + ".py";
  return s;
}

PromptFn NoPrompt(int* calls) {
  return [calls](const fs::path& p) -> Result<std::vector<model::Message>> {
    ++*calls;
    return std::vector<model::Message>{{"system", "made"}, {"user", "prompt for " + p.string()}};
  };
}

TEST(Load, TrajectoriesAndVerdictsWithBadLinesAsWarnings) {
  fs::path dir = fs::temp_directory_path() / ("kforge-data-test-" + std::to_string(getpid()));
  fs::create_directories(dir / "gen");
  fs::create_directories(dir / "bench" / "s");
  Verdict ok;
  ok.problem_id = "level1/relu";
  ok.problem_hash = "ph";
  ok.status = VerdictStatus::kOk;
  json v = ToJson(ok);
  auto turn = [&](int sample, int t, const char* status) {
    json vv = v;
    vv["status"] = status;
    return json{{"type", "turn"},
                {"sample", sample},
                {"turn", t},
                {"messages",
                 {{{"role", "system"}, {"content", "s"}}, {{"role", "user"}, {"content", "u"}}}},
                {"reply", "r"},
                {"reasoning", ""},
                {"candidate", "code"},
                {"verdict", vv}}
        .dump();
  };
  {
    std::ofstream f(dir / "gen" / "trajectories.jsonl");
    f << turn(0, 2, "ok") << "\n"
      << turn(0, 1, "incorrect") << "\n"
      << "{not json\n"
      << turn(1, 1, "ok") << "\n"
      << json{{"type", "trajectory"}, {"sample", 0}}.dump() << "\n";
  }
  {
    std::ofstream s(dir / "bench" / "s" / "sample_0.py");
    s << "class ModelNew: pass\n";
    std::ofstream f(dir / "bench" / "verdicts.jsonl");
    f << json{{"level", "level1"},
              {"problem", "relu"},
              {"sample", "s/sample_0.py"},
              {"problem_path", "p.py"},
              {"verdict", v}}
             .dump()
      << "\n"
      << json{{"verdict", "nope"}}.dump() << "\n";
  }
  auto c = Load({dir / "gen"}, {dir / "bench" / "verdicts.jsonl"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->conversations.size(), 2u);
  ASSERT_EQ(c->conversations[0].turns.size(), 2u);
  EXPECT_EQ(c->conversations[0].turns[0].turn, 1);  // sorted by turn
  EXPECT_EQ(c->conversations[0].turns[1].verdict.status, VerdictStatus::kOk);
  EXPECT_EQ(c->conversations[0].turns[0].problem, "level1/relu");
  ASSERT_EQ(c->bench.size(), 1u);
  EXPECT_EQ(c->bench[0].candidate, "class ModelNew: pass\n");  // relative to verdicts.jsonl
  EXPECT_EQ(c->bench[0].problem_path, dir / "bench" / "p.py");
  EXPECT_EQ(c->warnings.size(), 2u);  // the bad trajectory line and the bad verdict record
  EXPECT_FALSE(Load({dir / "nothing-here"}, {}).ok());
  fs::remove_all(dir);
}

TEST(Sft, FinalKernelWithOrWithoutItsRepairs) {
  Corpus c;
  c.conversations.push_back(
      {"a#0",
       {Turn(1, VerdictStatus::kCompileError, "k1", {}),
        Turn(2, VerdictStatus::kIncorrect, "k2", {}), Turn(3, VerdictStatus::kOk, "k3", 0.9)}});
  c.conversations.push_back({"b#0", {Turn(1, VerdictStatus::kIncorrect, "x", {})}});
  int calls = 0;
  Output plain = Sft(c, {}, NoPrompt(&calls));
  ASSERT_EQ(plain.examples.size(), 1u);  // the conversation that never passed gives none
  const auto& m = plain.examples[0].messages;
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[1].content, kTask);
  EXPECT_EQ(m[2].role, "assistant");
  EXPECT_EQ(m[2].content, c.conversations[0].turns[2].reply);

  Output rep = Sft(c, SftOptions{.repairs = true, .reasoning = true}, NoPrompt(&calls));
  const auto& r = rep.examples[0].messages;
  ASSERT_EQ(r.size(), 7u);  // system, task, a1, feedback 2, a2, feedback 3, a3
  std::vector<std::string> roles;
  for (const auto& x : r) roles.push_back(x.role);
  EXPECT_EQ(roles, (std::vector<std::string>{"system", "user", "assistant", "user", "assistant",
                                             "user", "assistant"}));
  EXPECT_EQ(r[3].content, "Turn 2 feedback.");  // the repair part only, not the task again
  EXPECT_EQ(r[6].content, "<think>\nthinking 3\n</think>\n\n" + c.conversations[0].turns[2].reply);
  EXPECT_EQ(rep.examples[0].metadata["assistant_turns"], 3);
  EXPECT_EQ(calls, 0);
}

TEST(Sft, BenchSamplesTakeARecordedPromptElseTheProblemsOwn) {
  Corpus c;
  c.conversations.push_back({"a#0", {Turn(1, VerdictStatus::kOk, "k1", 1.1)}});
  c.bench.push_back(BenchSample(VerdictStatus::kOk, "k1", 1.1));  // the same kernel: once
  c.bench.push_back(BenchSample(VerdictStatus::kOk, "k9", 1.3));
  c.bench.push_back(BenchSample(VerdictStatus::kCheat, "k8", 9.0));
  c.bench.push_back(BenchSample(VerdictStatus::kOk, "s1", 1.0, "level1/softmax"));
  int calls = 0;
  Output out = Sft(c, {}, NoPrompt(&calls));
  ASSERT_EQ(out.examples.size(), 3u);
  EXPECT_EQ(out.examples[1].messages[1].content, kTask);  // the recorded prompt of relu
  EXPECT_EQ(out.examples[1].messages[2].content, "```python\nk9\n```");
  EXPECT_EQ(out.examples[2].messages[1].content, "prompt for /problems/level1/softmax.py");
  EXPECT_EQ(calls, 1);
}

TEST(Rft, MostDiverseFastKernelsOneSolutionOnce) {
  auto kernel = [](const std::string& name, const std::string& body) {
    return "import torch\nsrc = '''\n#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor " +
           name + ") {\n  auto y = torch::empty_like(" + name + ");\n" + body +
           "\n  return y;\n}\n'''\nclass ModelNew(torch.nn.Module):\n    pass\n";
  };
  std::string a = kernel("x", "  for (int64_t i = 0; i < n; ++i) { y[i] = x[i] > 0 ? x[i] : 0; }");
  std::string a2 =
      kernel("inp", "  for (int64_t j = 0; j < n; ++j) { y[j] = inp[j] > 0 ? inp[j] : 0; }");
  std::string b =
      kernel("x",
             "  int64_t i = 0;\n  for (; i + 4 <= n; i += 4) {\n    y[i] = std::max(x[i], 0.f);"
             "\n    y[i+1] = std::max(x[i+1], 0.f);\n  }\n  #pragma omp simd\n"
             "  for (; i < n; ++i) y[i] = std::max(x[i], 0.f);");
  auto sig = [](const std::string& k) {
    return similarity::MinHash(similarity::Shingles(similarity::KernelTokens(k), 5), 128);
  };
  // What the selection relies on: a2 is a's solution renamed, b is another one.
  ASSERT_GT(similarity::EstimatedJaccard(sig(a), sig(a2)), 0.9);
  ASSERT_LT(similarity::EstimatedJaccard(sig(a), sig(b)), 0.9);
  Corpus c;
  c.bench = {BenchSample(VerdictStatus::kOk, a, 2.0), BenchSample(VerdictStatus::kOk, a2, 1.5),
             BenchSample(VerdictStatus::kOk, b, 1.2), BenchSample(VerdictStatus::kOk, "slow", 0.5),
             BenchSample(VerdictStatus::kIncorrect, "wrong", 5.0)};
  int calls = 0;
  Output out = Rft(c, RftOptions{.min_speedup = 1.0, .k = 3}, NoPrompt(&calls));
  ASSERT_EQ(out.examples.size(), 2u);
  EXPECT_EQ(out.examples[0].metadata["candidate_hash"], "c-" + a);  // the fastest first
  EXPECT_EQ(out.examples[1].metadata["candidate_hash"], "c-" + b);
  EXPECT_EQ(out.examples[0].metadata["pool"], 3);  // slow and wrong never entered
  Output one = Rft(c, RftOptions{.min_speedup = 1.0, .k = 1}, NoPrompt(&calls));
  ASSERT_EQ(one.examples.size(), 1u);
  // Without the similarity cut the renamed copy comes back as the third.
  Output all =
      Rft(c, RftOptions{.min_speedup = 1.0, .k = 3, .max_similarity = 1.0}, NoPrompt(&calls));
  EXPECT_EQ(all.examples.size(), 3u);
  // A threshold of 0 lets verdicts without a speedup (--no-baselines) in.
  c.bench.push_back(BenchSample(VerdictStatus::kOk, "nobase", std::nullopt));
  EXPECT_EQ(Rft(c, RftOptions{.min_speedup = 0, .k = 10, .max_similarity = 1.0}, NoPrompt(&calls))
                .examples.size(),
            5u);
}

TEST(Rl, DifficultyFromPassAtKEasiestFirst) {
  Corpus c;
  for (auto st : {VerdictStatus::kOk, VerdictStatus::kOk, VerdictStatus::kOk,
                  VerdictStatus::kIncorrect, VerdictStatus::kInfraError}) {
    c.bench.push_back(BenchSample(st, "k", 1.0, "level1/easy"));
  }
  c.bench.push_back(BenchSample(VerdictStatus::kIncorrect, "k", {}, "level2/hard"));
  c.conversations.push_back({"a#0",
                             {Turn(1, VerdictStatus::kCheat, "k", {}, "level2/hard"),
                              Turn(2, VerdictStatus::kOk, "k", 1.0, "level2/hard")}});
  RlOptions opt;
  opt.extra_problems["level3/new"] = "/problems/level3/new.py";
  int calls = 0;
  auto read = [](const fs::path& p) -> Result<std::string> { return "source of " + p.string(); };
  Output out = Rl(c, opt, NoPrompt(&calls), read);
  ASSERT_EQ(out.examples.size(), 3u);
  const auto& easy = out.examples[0].metadata;
  EXPECT_EQ(easy["problem"], "level1/easy");
  EXPECT_EQ(easy["n"], 4);  // the infra_error sample is not counted
  EXPECT_EQ(easy["c"], 3);
  EXPECT_DOUBLE_EQ(easy["difficulty"].get<double>(), 1 - bench::PassAtK(4, 3, 1));
  EXPECT_EQ(easy["bucket"], "easy");
  const auto& hard = out.examples[1].metadata;
  EXPECT_EQ(hard["problem"], "level2/hard");
  EXPECT_EQ(hard["n"], 2);  // the bench sample and turn 1; the repaired turn 2 is no sample
  EXPECT_EQ(hard["bucket"], "unsolved");
  EXPECT_EQ(out.examples[1].messages[1].content, kTask);  // generate's own prompt
  EXPECT_EQ(out.examples[2].metadata["bucket"], "unknown");
  EXPECT_EQ(out.examples[2].metadata["ground_truth"], "level3/new");
  // Pass@2 of 3 in 4 is 1: no difficulty left.
  opt.k = 2;
  EXPECT_DOUBLE_EQ(
      Rl(c, opt, NoPrompt(&calls), read).examples[0].metadata["difficulty"].get<double>(),
      1 - bench::PassAtK(4, 3, 2));
  opt.k = 1;
  opt.min_difficulty = 0.5;  // only the unsolved one and the unknown one stay
  EXPECT_EQ(Rl(c, opt, NoPrompt(&calls), read).examples.size(), 2u);
  opt.min_difficulty = 0;
  opt.inline_problems = true;
  Output in = Rl(c, opt, NoPrompt(&calls), read);
  EXPECT_EQ(in.examples[0].metadata["ground_truth"], "source of /problems/level1/easy.py");
}

TEST(ToJsonl, ChatAndVerlLayouts) {
  Output out;
  out.examples.push_back({{{"system", "s"}, {"user", "u"}},
                          {{"problem", "level1/relu"},
                           {"ground_truth", "level1/relu"},
                           {"data_source", "kforge"},
                           {"ability", "kernel_generation"},
                           {"difficulty", 0.5}}});
  json chat = json::parse(ToJsonl(out, Format::kChat, true));
  EXPECT_EQ(chat["messages"][1]["content"], "u");
  EXPECT_EQ(chat["metadata"]["difficulty"], 0.5);
  json verl = json::parse(ToJsonl(out, Format::kVerl, true));
  EXPECT_EQ(verl["data_source"], "kforge");
  EXPECT_EQ(verl["ability"], "kernel_generation");
  EXPECT_EQ(verl["prompt"][0]["role"], "system");
  EXPECT_EQ(verl["reward_model"]["style"], "rule");
  EXPECT_EQ(verl["reward_model"]["ground_truth"], "level1/relu");
  EXPECT_EQ(verl["extra_info"]["split"], "train");
  EXPECT_FALSE(verl["extra_info"].contains("ground_truth"));
  json sft = json::parse(ToJsonl(out, Format::kVerl, false));
  EXPECT_EQ(sft["messages"][0]["content"], "s");
  EXPECT_EQ(sft["extra_info"]["problem"], "level1/relu");
}

}  // namespace
}  // namespace kf::data
