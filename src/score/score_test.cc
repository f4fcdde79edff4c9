#include "score/score.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kf::score {
namespace {

Verdict Passing(double speedup_vs_eager) {
  Verdict v;
  v.problem_id = "level1/19_ReLU";
  v.problem_hash = "p1";
  v.candidate_hash = "c1";
  v.backend = "cuda";
  v.device = "NVIDIA H200";
  v.status = VerdictStatus::kOk;
  v.stages = {{"extract", true, 0.4, {}}, {"build", true, 1500, {}}, {"execute", true, 800, {}}};
  v.trials_passed = 5;
  v.trials_total = 5;
  v.candidate_ms = TimingSummary{0.25, 0.24, 0.27, 120};
  v.eager_ms = 0.25 * speedup_vs_eager;
  v.speedup_vs_eager = speedup_vs_eager;
  // A tight interval: the speedup is what it says (RewardTest.BonusNeedsTheIntervalAboveOne).
  v.speedup_vs_eager_ci = SpeedupInterval{speedup_vs_eager * 0.97, speedup_vs_eager * 1.03};
  return v;
}

Verdict Failing(VerdictStatus s) {
  Verdict v = Passing(3.0);  // facts that must not matter once the status is a failure
  v.status = s;
  return v;
}

Diagnostic Diag(std::string code, std::string message, int line = 0,
                Severity sev = Severity::kError) {
  Diagnostic d;
  d.stage = "build";
  d.code = std::move(code);
  d.message = std::move(message);
  d.line = line;
  d.severity = sev;
  return d;
}

TEST(RewardTest, FailuresAreMinusOne) {
  for (VerdictStatus s :
       {VerdictStatus::kFormatError, VerdictStatus::kCompileError, VerdictStatus::kRuntimeError,
        VerdictStatus::kTimeout, VerdictStatus::kCheat}) {
    EXPECT_EQ(Reward(Failing(s)), -1.0) << StatusName(s);
  }
}

TEST(RewardTest, InfraErrorHasNoReward) {
  EXPECT_FALSE(Reward(Failing(VerdictStatus::kInfraError)).has_value());
}

TEST(RewardTest, PartialCorrectness) {
  Verdict v = Failing(VerdictStatus::kIncorrect);
  v.trials_passed = 0;
  EXPECT_EQ(Reward(v), -1.0);
  v.trials_passed = 3;  // q = 0.6
  EXPECT_DOUBLE_EQ(*Reward(v), -0.2);
  v.trials_passed = 1;  // q = 0.2
  EXPECT_DOUBLE_EQ(*Reward(v), -0.4);
  v.trials_passed = 5;  // q = 1 but incorrect (e.g. a timed-iteration output was wrong)
  EXPECT_DOUBLE_EQ(*Reward(v), 0.0);
}

TEST(RewardTest, OkWithoutTrialsIsMinusOne) {
  Verdict v = Passing(2.0);
  v.trials_passed = v.trials_total = 0;
  EXPECT_EQ(Reward(v), -1.0);
}

TEST(RewardTest, SpeedupBonus) {
  EXPECT_DOUBLE_EQ(*Reward(Passing(1.0)), 1.0);
  EXPECT_DOUBLE_EQ(*Reward(Passing(2.0)), 1.5);
  EXPECT_DOUBLE_EQ(*Reward(Passing(5.0)), 3.0);   // exactly at the cap
  EXPECT_DOUBLE_EQ(*Reward(Passing(50.0)), 3.0);  // capped at 1 + 0.5 * 4
  EXPECT_DOUBLE_EQ(*Reward(Passing(0.3)), 1.0);   // slower than eager: correct, no bonus
}

// A speedup whose interval reaches down to 1 or below was not shown: no bonus, whatever the
// point estimate says; the same verdict with a tight interval gets it, and --no-significance
// (significance = false) pays the point estimate as before.
TEST(RewardTest, BonusNeedsTheIntervalAboveOne) {
  Verdict v = Passing(1.6);
  EXPECT_DOUBLE_EQ(*Reward(v), 1.3);
  v.speedup_vs_eager_ci = SpeedupInterval{0.9, 2.4};  // a noisy measurement
  EXPECT_DOUBLE_EQ(*Reward(v), 1.0);
  v.speedup_vs_eager_ci.reset();  // no interval (the reference not timed beside it)
  EXPECT_DOUBLE_EQ(*Reward(v), 1.0);
  RewardOptions old;
  old.significance = false;
  EXPECT_DOUBLE_EQ(*Reward(v, old), 1.3);
  v.speedup_vs_eager_ci = SpeedupInterval{1.0, 1.2};  // the lower end must be above 1
  EXPECT_DOUBLE_EQ(*Reward(v), 1.0);
}

TEST(RewardTest, UnknownSpeedupEarnsNoBonus) {
  Verdict v = Passing(2.0);
  v.speedup_vs_eager.reset();
  EXPECT_DOUBLE_EQ(*Reward(v), 1.0);
  v.speedup_vs_eager = std::nan("");
  EXPECT_DOUBLE_EQ(*Reward(v), 1.0);
  v.speedup_vs_eager = std::numeric_limits<double>::infinity();
  EXPECT_DOUBLE_EQ(*Reward(v), 1.0);
}

TEST(RewardTest, AgainstCompileAndCustomOptions) {
  Verdict v = Passing(4.0);
  v.speedup_vs_compile = 1.5;
  v.speedup_vs_compile_ci = SpeedupInterval{1.4, 1.6};
  RewardOptions opt;
  opt.against_compile = true;
  EXPECT_DOUBLE_EQ(*Reward(v, opt), 1.25);
  v.speedup_vs_compile.reset();  // no compile time: no bonus, even though eager is beaten
  EXPECT_DOUBLE_EQ(*Reward(v, opt), 1.0);
  opt = RewardOptions{.lambda = 1.0, .nu_max = 2.0, .against_compile = false};
  EXPECT_DOUBLE_EQ(*Reward(v, opt), 3.0);  // min(4 - 1, 2) = 2
}

TEST(PrimeEchoTest, HandComputed) {
  // 0.75 * -1 + 0.25 * 1.5 + 0
  EXPECT_DOUBLE_EQ(PrimeEcho({-1, 0, 1.5}, 3), -0.375);
  // 0.75 * 1.2 + 0.25 * 1.2 + 0.2
  EXPECT_DOUBLE_EQ(PrimeEcho({1.2}, 1), 1.4);
  // 0.75 * -0.5 + 0.25 * 1 + 0.1
  EXPECT_DOUBLE_EQ(PrimeEcho({-0.5, 1.0}, 2), -0.025);
  // never passed: 0.75 * -1 + 0.25 * -0.2
  EXPECT_DOUBLE_EQ(PrimeEcho({-1, -0.2, -1}, 0), -0.8);
  PrimeEchoOptions opt{.alpha = 0.5, .bonus_turn1 = 1, .bonus_turn2 = 0.5};
  EXPECT_DOUBLE_EQ(PrimeEcho({0, 2}, 2, opt), 1.5);  // 0 + 1 + 0.5
  EXPECT_DOUBLE_EQ(PrimeEcho({}, 0), 0.0);
}

TEST(FeedbackTest, Ok) {
  Verdict v = Passing(2.0);
  v.compile_ms = 0.4;
  v.speedup_vs_compile = 1.6;
  v.diagnostics.push_back(Diag("roofline", "memory bound: 3.1 of 4.8 TB/s", 0, Severity::kInfo));
  v.diagnostics.push_back(Diag("other", "an unrelated info", 0, Severity::kInfo));
  std::string f = Feedback(v);
  EXPECT_NE(f.find("5 of 5"), std::string::npos) << f;
  EXPECT_NE(f.find("0.2500 ms"), std::string::npos) << f;
  EXPECT_NE(f.find("2.00\u00d7 vs eager"), std::string::npos) << f;
  EXPECT_NE(f.find("1.60\u00d7 vs torch.compile"), std::string::npos) << f;
  EXPECT_NE(f.find("memory bound: 3.1 of 4.8 TB/s"), std::string::npos) << f;
  EXPECT_EQ(f.find("unrelated"), std::string::npos) << f;
  EXPECT_EQ(f, Feedback(v));  // deterministic
}

TEST(FeedbackTest, OkSlowAndNoCompile) {
  Verdict v = Passing(0.5);
  v.compile_unavailable = "triton is not installed";
  std::string f = Feedback(v);
  EXPECT_NE(f.find("slower than eager"), std::string::npos) << f;
  EXPECT_NE(f.find("triton is not installed"), std::string::npos) << f;
}

TEST(FeedbackTest, CompileErrorShowsLinesAndExcerpts) {
  Verdict v = Failing(VerdictStatus::kCompileError);
  Diagnostic d = Diag("nvcc", "identifier \"blockIdy\" is undefined", 17);
  d.col = 13;
  d.excerpt = "  int i = blockIdy.x;";
  d.hint = "did you mean blockIdx?";
  v.diagnostics = {d, Diag("nvcc", "a warning", 3, Severity::kWarning)};
  std::string f = Feedback(v);
  EXPECT_EQ(f.rfind("Your code did not compile.", 0), 0u) << f;
  EXPECT_NE(f.find("line 17:13: identifier \"blockIdy\" is undefined"), std::string::npos) << f;
  EXPECT_NE(f.find("| " + d.excerpt), std::string::npos) << f;
  EXPECT_NE(f.find("did you mean blockIdx?"), std::string::npos) << f;
  EXPECT_EQ(f.find("a warning"), std::string::npos) << f;
}

TEST(FeedbackTest, RuntimeErrorAndTimeout) {
  Verdict v = Failing(VerdictStatus::kRuntimeError);
  v.stages[2].ok = false;
  v.diagnostics = {Diag("exception", "RuntimeError: CUDA error: illegal memory access", 42)};
  std::string f = Feedback(v);
  EXPECT_NE(f.find("failed while running"), std::string::npos) << f;
  EXPECT_NE(f.find("execute stage failed"), std::string::npos) << f;
  EXPECT_NE(f.find("line 42: RuntimeError: CUDA error"), std::string::npos) << f;

  v.status = VerdictStatus::kTimeout;
  v.stages[2].ms = 30000;
  v.diagnostics = {Diag("watchdog", "the candidate's forward did not return within 30 s")};
  f = Feedback(v);
  EXPECT_NE(f.find("did not finish in time"), std::string::npos) << f;
  EXPECT_NE(f.find("execute stage was stopped after 30000 ms"), std::string::npos) << f;
  EXPECT_NE(f.find("did not return within 30 s"), std::string::npos) << f;
}

TEST(FeedbackTest, IncorrectSaysWhere) {
  Verdict v = Failing(VerdictStatus::kIncorrect);
  v.trials_passed = 2;
  v.diagnostics = {Diag("mismatch",
                        "output 0: max abs error 0.31 (tol 1e-4) at index [3, 17]; 12.5% of "
                        "elements differ")};
  std::string f = Feedback(v);
  EXPECT_NE(f.find("passed 2 of 5"), std::string::npos) << f;
  EXPECT_NE(f.find("max abs error 0.31"), std::string::npos) << f;
  EXPECT_NE(f.find("index [3, 17]"), std::string::npos) << f;
}

TEST(FeedbackTest, CheatNamesRuleAndLine) {
  Verdict v = Failing(VerdictStatus::kCheat);
  Diagnostic d = Diag("H03", "torch.matmul called in ModelNew.forward", 28);
  d.excerpt = "return torch.matmul(a, b)";
  v.diagnostics = {d};
  std::string f = Feedback(v);
  EXPECT_NE(f.find("not allowed"), std::string::npos) << f;
  EXPECT_NE(f.find("Rule H03 at line 28"), std::string::npos) << f;
  EXPECT_NE(f.find("torch.matmul called"), std::string::npos) << f;
  EXPECT_NE(f.find("| return torch.matmul(a, b)"), std::string::npos) << f;
}

TEST(FeedbackTest, FormatAndInfra) {
  Verdict v = Failing(VerdictStatus::kFormatError);
  v.diagnostics = {Diag("no_model_new", "no class ModelNew found")};
  EXPECT_NE(Feedback(v).find("no class ModelNew found"), std::string::npos);
  v.status = VerdictStatus::kInfraError;
  EXPECT_NE(Feedback(v).find("says nothing about your code"), std::string::npos);
}

TEST(FeedbackTest, TruncatesCompactly) {
  Verdict v = Failing(VerdictStatus::kCompileError);
  for (int i = 1; i <= 30; ++i) {
    Diagnostic d = Diag("nvcc", "error number " + std::to_string(i), i);
    d.excerpt = std::string(300, 'x') + "\n" + std::string(300, 'y');
    v.diagnostics.push_back(d);
  }
  std::string f = Feedback(v);
  EXPECT_LE(f.size(), 4000u);
  EXPECT_LE(std::count(f.begin(), f.end(), '\n'), 40);
  EXPECT_NE(f.find("error number 1 "), std::string::npos) << f;
  EXPECT_EQ(f.find("error number 6 "), std::string::npos) << f;  // only the first five
  EXPECT_NE(f.find("more"), std::string::npos) << f;

  // Many short lines hit the line cap instead.
  v.diagnostics.clear();
  for (int i = 0; i < 5; ++i) {
    Diagnostic d = Diag("nvcc", "e", i + 1);
    for (int k = 0; k < 20; ++k) {
      d.excerpt += "l\n";
    }
    v.diagnostics.push_back(d);
  }
  f = Feedback(v);
  EXPECT_LE(std::count(f.begin(), f.end(), '\n'), 39);
  EXPECT_NE(f.find("more lines"), std::string::npos) << f;
}

TEST(FinishTest, FillsRewardAndFeedback) {
  Verdict v = Passing(3.0);
  Finish(&v);
  EXPECT_DOUBLE_EQ(*v.reward, 2.0);
  EXPECT_FALSE(v.feedback.empty());
}

TEST(RenderTest, ContainsKeyFacts) {
  Verdict v = Passing(2.0);
  v.compile_unavailable = "triton missing";
  Diagnostic d = Diag("W1", "uses a fixed block size", 9, Severity::kWarning);
  d.col = 4;
  d.excerpt = "BLOCK = 128";
  d.hint = "derive it from the input size";
  v.diagnostics = {d};
  Finish(&v);
  std::string r = Render(v, false);
  for (const char* fact :
       {"status:      ok", "level1/19_ReLU", "c1", "cuda", "NVIDIA H200", "build", "1500 ms",
        "5/5 trials", "0.2500 ms [0.2400\u20130.2700] n=120", "eager      0.5000 ms",
        "unavailable: triton missing", "2.00\u00d7 vs eager", "unknown vs torch.compile", "+1.5000",
        "warning", "line 9:4: uses a fixed block size [W1]", "| BLOCK = 128",
        "hint: derive it from the input size", "feedback:"}) {
    EXPECT_NE(r.find(fact), std::string::npos) << fact << "\n" << r;
  }
  EXPECT_EQ(r.find("\033["), std::string::npos);
  EXPECT_LT(r.find("diagnostics:"), r.find("feedback:"));  // feedback last

  std::string colored = Render(v, true);
  EXPECT_NE(colored.find("\033[32m"), std::string::npos);  // green for ok
  v.status = VerdictStatus::kTimeout;
  EXPECT_NE(Render(v, true).find("\033[33m"), std::string::npos);
  v.status = VerdictStatus::kCompileError;
  EXPECT_NE(Render(v, true).find("\033[31m"), std::string::npos);
  v.status = VerdictStatus::kInfraError;
  v.reward.reset();
  EXPECT_NE(Render(v, false).find("reward:      none"), std::string::npos);
}

}  // namespace
}  // namespace kf::score
