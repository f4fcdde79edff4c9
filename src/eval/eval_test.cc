// The Evaluator on fake parts (eval_fakes.h): no Python, compiler, database or GPU. Lanes that
// crash, builds that hang, a busy machine, a store that cannot write, and what is stored.
#include "eval/eval.h"

#include <gtest/gtest.h>

#include <sstream>
#include <unistd.h>

#include "common/files.h"
#include "eval/decide.h"
#include "eval/eval_fakes.h"
#include "eval/parts.h"

namespace kf::eval {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using fakes::FakeBuilder;
using fakes::FakeClock;
using fakes::FakeLane;
using fakes::FakeStore;
using fakes::LaneFault;
using fakes::StoreState;
using fakes::TimedRun;

const fs::path kSource = KFORGE_SOURCE_DIR;

const Diagnostic* FindDiagnostic(const Verdict& v, const std::string& stage,
                                 const std::string& code) {
  for (const auto& d : v.diagnostics) {
    if (d.stage == stage && d.code == code) return &d;
  }
  return nullptr;
}
bool HasDiagnostic(const Verdict& v, const std::string& stage, const std::string& code) {
  return FindDiagnostic(v, stage, code) != nullptr;
}

const StageRecord* StageOf(const Verdict& v, const std::string& name) {
  for (const auto& s : v.stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// A measurement of the reference alone (LaneRunner::TimeBaselines), `disturbed` or not ("").
execute::BaselineResult Baselines(double eager_ms, const std::string& disturbed) {
  execute::BaselineResult b = *TimedRun(1.0, eager_ms).baselines;
  b.disturbed = disturbed;
  return b;
}

// The real problem and an honest candidate for it, from the source tree; every part fake.
class EvaluatorTest : public ::testing::Test {
 public:  // the cases of InfraErrorsFromEveryPartAreNeverStored reach in
  void SetUp() override {
    opt.backend = "cpu";
    opt.runner_dir = kSource / "runner";  // read for the policy and the verdict settings only
    opt.cache_dir = fs::temp_directory_path() / ("kforge_eval_test_" + std::to_string(getpid()));
    problem = kSource / "problems" / "level1" / "relu.py";
    auto text = ReadFile(kSource / "examples" / "cpu" / "relu.py");
    ASSERT_TRUE(text.ok());
    candidate = *text;
  }

  // A new Evaluator on new fake parts; the store's contents (`state`) are kept.
  std::unique_ptr<Evaluator> Make(int n_lanes = 1) {
    EvaluatorParts parts;
    auto b = std::make_unique<FakeBuilder>();
    builder = b.get();
    parts.builder = std::move(b);
    auto st = std::make_unique<FakeStore>();
    st->s = state;
    parts.store = std::move(st);
    lanes.clear();
    for (int i = 0; i < n_lanes; ++i) {
      auto l = std::make_unique<FakeLane>();
      lanes.push_back(l.get());
      parts.lanes.push_back(std::move(l));
    }
    auto c = std::make_unique<FakeClock>();
    clock = c.get();
    parts.clock = std::move(c);
    auto ev = Evaluator::CreateWith(opt, std::move(parts));
    EXPECT_TRUE(ev.ok()) << ev.status().ToString();
    return ev.ok() ? std::move(ev.value()) : nullptr;
  }

  FakeLane& lane() { return *lanes.at(0); }
  size_t Stored() {
    std::lock_guard<std::mutex> g(state->mu);
    return state->verdicts.size();
  }

  EvalOptions opt;
  fs::path problem;
  std::string candidate;
  std::shared_ptr<StoreState> state = std::make_shared<StoreState>();
  FakeBuilder* builder = nullptr;
  std::vector<FakeLane*> lanes;
  FakeClock* clock = nullptr;
};

TEST(EvaluatorParts, CreateWithNeedsABuilderAndAStore) {
  EXPECT_FALSE(Evaluator::CreateWith(EvalOptions{}, EvaluatorParts{}).ok());
}

TEST_F(EvaluatorTest, AnHonestCandidateIsBuiltRunTimedAndStored) {
  auto ev = Make();
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kOk) << ToJson(v).dump(1);
  EXPECT_EQ(v.device, "Fake CPU");
  ASSERT_TRUE(v.speedup_vs_eager);
  EXPECT_DOUBLE_EQ(*v.speedup_vs_eager, 2.0);  // the interleaved eager 2 ms over 1 ms
  EXPECT_EQ(builder->builds.load(), 1);        // its one load_inline call
  EXPECT_EQ(builder->natives.load(), 1);       // the timing helper
  EXPECT_EQ(lane().readies.load(), 1);
  EXPECT_EQ(lane().runs.load(), 1);
  EXPECT_EQ(Stored(), 1u);
  ASSERT_TRUE(ev->Lookup(problem, candidate));
}

TEST_F(EvaluatorTest, StageTimesComeFromTheInjectedClock) {
  auto ev = Make();
  builder->build = [this](const ExtensionSpec& spec) {
    clock->Advance(1500ms);
    return fakes::BuiltArtifact(spec.name);
  };
  Verdict v = ev->Evaluate(problem, candidate);
  ASSERT_NE(StageOf(v, "build"), nullptr);
  EXPECT_DOUBLE_EQ(StageOf(v, "build")->ms, 1500);
  EXPECT_DOUBLE_EQ(StageOf(v, "extract")->ms, 0);  // nothing else moved the clock
  EXPECT_DOUBLE_EQ(StageOf(v, "static")->ms, 0);
}

TEST_F(EvaluatorTest, ALaneWhoseJudgeCrashedIsInfraErrorAndNothingIsStored) {
  auto ev = Make();
  lane().ready_error = Status::Unavailable("the judge exited (signal 11) before it was ready");
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kInfraError);
  EXPECT_TRUE(HasDiagnostic(v, "execute", "infra"));
  EXPECT_FALSE(v.reward);
  EXPECT_EQ(lane().runs.load(), 0);
  EXPECT_EQ(state->verdict_puts, 0);
  EXPECT_FALSE(ev->Lookup(problem, candidate));
  // Describe and Warm report the same failure as a Status.
  EXPECT_FALSE(ev->Describe(problem).ok());
  EXPECT_FALSE(ev->Warm(problem).ok());
}

// A CUDA candidate that dies of SIGSEGV with a TORCH_CHECK streaming its message in its CUDA
// sources: the crash's hint names that check and its line (eval::HintStreamedCheck); on the CPU
// backend, where nvcc built nothing, the memory hint alone.
TEST_F(EvaluatorTest, ASegfaultOnCudaNamesAStreamedCheckInTheSources) {
  auto text = ReadFile(kSource / "examples" / "cuda" / "broken" / "failing_check.py");
  ASSERT_TRUE(text.ok());
  int check_line = 0;  // the line of the example's streamed check, as the hint should give it
  {
    std::istringstream in(*text);
    std::string l;
    for (int n = 1; std::getline(in, l); ++n) {
      if (l.rfind("    TORCH_CHECK(x.dim() == 1,", 0) == 0) check_line = n;
    }
  }
  ASSERT_GT(check_line, 0);
  for (const std::string backend : {"cuda", "cpu"}) {
    opt.backend = backend;
    auto ev = Make();
    lane().run = [](int, const execute::LoadInlineFn&) {
      execute::ExecResult r = fakes::Crash();
      r.diagnostics[0].message =
          "the candidate process died during the first trial: it was killed by signal 11 "
          "(Segmentation fault)";
      r.diagnostics[0].hint = "Check memory accesses.";
      return r;
    };
    Verdict v = ev->Evaluate(problem, *text);
    EXPECT_EQ(v.status, VerdictStatus::kRuntimeError) << backend;
    const Diagnostic* d = FindDiagnostic(v, "correctness", "crash");
    ASSERT_NE(d, nullptr) << backend;
    if (backend == "cuda") {
      EXPECT_NE(d->hint.find("`TORCH_CHECK(x.dim() == 1, \"relu_1d: expected a 1-D tensor, got "
                             "\", x.dim(), \" dimensions\")` (line " +
                             std::to_string(check_line) + ")"),
                std::string::npos)
          << d->hint;
    } else {
      EXPECT_EQ(d->hint, "Check memory accesses.");
    }
  }
}

TEST_F(EvaluatorTest, ACrashWithItsLaneDeadIsInfraErrorAndTheNextJobGetsANewLane) {
  auto ev = Make();
  FakeLane& l = lane();
  l.run = [&l](int n, const execute::LoadInlineFn&) {
    if (n == 1) l.alive = false;  // a killed worker: the judge and zygote with the candidate
    return n <= 2 ? fakes::Crash() : TimedRun(1.0);
  };
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kInfraError);  // not runtime_error: no -1 for an honest one
  ASSERT_FALSE(v.diagnostics.empty());
  EXPECT_EQ(v.diagnostics[0].code, execute::kLaneDiedCode);
  EXPECT_TRUE(LaneDied(v));  // what the Pipeline runs once more
  EXPECT_NE(v.diagnostics[0].message.find("died while the candidate ran"), std::string::npos);
  EXPECT_TRUE(HasDiagnostic(v, "correctness", "crash"));  // kept as evidence
  EXPECT_EQ(Stored(), 0u);
  // The next job restarts the lane, readies it and loads the problem again; a crash while the
  // lane lives is the candidate's.
  v = ev->Evaluate(problem, candidate + "\n# again\n");
  EXPECT_EQ(v.status, VerdictStatus::kRuntimeError);
  EXPECT_EQ(l.restarts.load(), 1);
  EXPECT_EQ(l.readies.load(), 2);
  EXPECT_EQ(l.loads.load(), 2);
  EXPECT_EQ(ev->Evaluate(problem, candidate + "\n# third\n").status, VerdictStatus::kOk);
  EXPECT_EQ(l.restarts.load(), 1);
}

TEST_F(EvaluatorTest, AJudgeGoneWhenATrialIsAskedForIsALaneDeathToo) {
  // The judge was killed between jobs: the run fails asking it for a trial (infra), and the
  // lane is found dead after it; the job is the lane's loss, not a plain infra_error.
  auto ev = Make();
  FakeLane& l = lane();
  l.run = [&l](int n, const execute::LoadInlineFn&) {
    if (n == 1) {
      l.alive = false;
      return LaneFault("infra", "the judge failed to prepare a trial: the judge process is gone");
    }
    return TimedRun(1.0);
  };
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kInfraError);
  EXPECT_TRUE(LaneDied(v));
  EXPECT_FALSE(SpoiledByLoad(v));
  EXPECT_EQ(ev->Evaluate(problem, candidate).status, VerdictStatus::kOk);  // the retry
  EXPECT_EQ(l.restarts.load(), 1);
  // An infra failure while the lane lives is not a lane death: nothing to run again for.
  l.run = [](int, const execute::LoadInlineFn&) { return LaneFault("infra", "no memory"); };
  v = ev->Evaluate(problem, candidate + "\n# other\n");
  EXPECT_EQ(v.status, VerdictStatus::kInfraError);
  EXPECT_FALSE(LaneDied(v));
}

TEST_F(EvaluatorTest, ALaneThatCannotStartAgainIsInfraErrorUntilItCan) {
  auto ev = Make();
  lane().alive = false;
  lane().restart_error = Status::Unavailable("python3 not found");
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kInfraError);
  EXPECT_NE(v.diagnostics[0].message.find("could not be started again: python3 not found"),
            std::string::npos);
  EXPECT_EQ(lane().runs.load(), 0);
  lane().restart_error.reset();
  EXPECT_EQ(ev->Evaluate(problem, candidate).status, VerdictStatus::kOk);
  EXPECT_EQ(lane().restarts.load(), 2);
}

TEST_F(EvaluatorTest, ABuildStoppedAtItsLimitWhileCompilingIsTheCandidatesCompileError) {
  auto ev = Make();
  // The compilers were on a CPU all along (a template explosion): the code's fault.
  builder->build = [this](const ExtensionSpec&) -> Result<build::Artifact> {
    clock->Advance(10min);
    build::Artifact a;
    a.error_text = "the build took longer than 600 s (590 s of compiler CPU) and was stopped";
    return a;
  };
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kCompileError);
  const Diagnostic* d = FindDiagnostic(v, "build", "compile_error");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->excerpt.find("took longer than 600 s"), std::string::npos);
  ASSERT_NE(StageOf(v, "build"), nullptr);
  EXPECT_FALSE(StageOf(v, "build")->ok);
  EXPECT_DOUBLE_EQ(StageOf(v, "build")->ms, 600'000);
  EXPECT_EQ(lane().readies.load() + lane().runs.load(), 0);  // decided without a lane
  // A verdict on the candidate: stored.
  EXPECT_EQ(Stored(), 1u);
}

TEST_F(EvaluatorTest, ABuildTheMachineStarvedPastItsLimitIsInfraErrorAndNotStored) {
  auto ev = Make();
  builder->build = [this](const ExtensionSpec&) -> Result<build::Artifact> {
    clock->Advance(10min);
    return Status::Unavailable(
        "the build did not finish within 600 s, and its compilers were "
        "on a CPU for only 20 s of them");
  };
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kInfraError);
  EXPECT_TRUE(HasDiagnostic(v, "build", "infra"));
  EXPECT_EQ(StageOf(v, "build"), nullptr);
  EXPECT_EQ(lane().runs.load(), 0);
  EXPECT_EQ(state->verdict_puts, 0);
}

TEST_F(EvaluatorTest, ATimingSpoiledByLoadIsNotStoredAndIsJudgedWhenRunAgain) {
  auto ev = Make();
  lane().run = [](int n, const execute::LoadInlineFn&) {
    return n == 1 ? LaneFault(execute::kBusyCode, "the host waited 80% of the timing for a CPU")
                  : TimedRun(1.0);
  };
  Verdict first = ev->Evaluate(problem, candidate);
  EXPECT_EQ(first.status, VerdictStatus::kInfraError);
  EXPECT_TRUE(SpoiledByLoad(first));  // what the Pipeline retries on
  EXPECT_EQ(state->verdict_puts, 0);
  EXPECT_FALSE(ev->Lookup(problem, candidate));
  // The Pipeline's retry: prepared and executed once more.
  Verdict again = ev->Execute(ev->Prepare(problem, candidate), 0);
  EXPECT_EQ(again.status, VerdictStatus::kOk);
  EXPECT_FALSE(SpoiledByLoad(again));
  EXPECT_EQ(lane().runs.load(), 2);
  EXPECT_EQ(lane().readies.load(), 1);  // the lane stays ready
  EXPECT_TRUE(ev->Lookup(problem, candidate));
}

TEST_F(EvaluatorTest, DisturbedBaselinesAreMeasuredAgainTwiceAtMostAndNeverStored) {
  auto ev = Make();
  lane().run = [](int, const execute::LoadInlineFn&) { return TimedRun(1.0, std::nullopt); };
  lane().baselines = {Baselines(4.0, "the judge waited for a CPU")};
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kOk);
  EXPECT_EQ(lane().baseline_timings.load(), 1 + kBaselineRetries);
  EXPECT_EQ(state->baseline_puts, 0);
  ASSERT_TRUE(v.eager_ms);
  EXPECT_DOUBLE_EQ(*v.eager_ms, 4.0);  // it still serves this verdict
  EXPECT_EQ(StageOf(v, "baselines")->detail.value("disturbed", ""), "the judge waited for a CPU");
}

TEST_F(EvaluatorTest, AWarmUpCompilesTheReferenceAndTimesNothing) {
  // Interleaved batches time the reference beside each candidate: a warm-up's own timing of
  // it would be lane time no verdict uses (2026-12-06, an H100: warm-ups were half the lane).
  auto ev = Make();
  ASSERT_TRUE(ev->Warm(problem).ok());
  EXPECT_EQ(lane().loads.load(), 1);
  EXPECT_EQ(lane().reference_warms.load(), 1);
  EXPECT_EQ(lane().baseline_timings.load(), 0);
  Verdict v = ev->Evaluate(problem, candidate);  // TimedRun: with interleaved baselines
  EXPECT_EQ(v.status, VerdictStatus::kOk);
  EXPECT_EQ(lane().loads.load(), 1);  // the warm-up's load serves it
  EXPECT_EQ(lane().baseline_timings.load(), 0);
  EXPECT_DOUBLE_EQ(v.eager_ms.value_or(0), 2.0);  // the interleaved eager batches'
}

TEST_F(EvaluatorTest, BaselinesUndisturbedOnASecondTryAreStoredAndReused) {
  auto ev = Make();
  lane().run = [](int, const execute::LoadInlineFn&) { return TimedRun(1.0, std::nullopt); };
  lane().baselines = {Baselines(4.0, "load"), Baselines(3.0, "")};
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(lane().baseline_timings.load(), 2);
  EXPECT_EQ(state->baseline_puts, 1);
  EXPECT_DOUBLE_EQ(v.eager_ms.value_or(0), 3.0);
  Verdict other = ev->Evaluate(problem, candidate + "\n# another candidate\n");
  EXPECT_EQ(other.status, VerdictStatus::kOk);
  EXPECT_EQ(lane().baseline_timings.load(), 2);  // from the store
  EXPECT_DOUBLE_EQ(other.eager_ms.value_or(0), 3.0);
}

TEST_F(EvaluatorTest, AStoreThatCannotWriteStillGivesTheVerdict) {
  auto ev = Make();
  state->fail_writes = true;
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kOk);
  EXPECT_TRUE(v.speedup_vs_eager);
  EXPECT_TRUE(v.reward);
  EXPECT_EQ(state->verdict_puts, 1);  // tried, failed, ignored
  EXPECT_FALSE(ev->Lookup(problem, candidate));
}

TEST_F(EvaluatorTest, AStoredVerdictIsLookedUpWithoutBuildingOrRunning) {
  auto first = Make();
  Verdict stored = first->Evaluate(problem, candidate);
  ASSERT_EQ(stored.status, VerdictStatus::kOk);
  auto ev = Make();  // new lane and builder, the same store
  auto got = ev->Lookup(problem, candidate);
  ASSERT_TRUE(got);
  EXPECT_EQ(ToJson(*got), ToJson(stored));
  EXPECT_EQ(builder->builds.load(), 0);
  EXPECT_EQ(lane().readies.load() + lane().loads.load() + lane().runs.load(), 0);
  EXPECT_FALSE(ev->Lookup(problem, candidate + "\n# never evaluated\n"));
}

TEST_F(EvaluatorTest, InfraErrorsFromEveryPartAreNeverStored) {
  const nlohmann::json rt_call = {
      {"name", "rt"}, {"cpp_sources", "int f() { return 0; }"}, {"functions", {"f"}}};
  struct Case {
    std::string name, stage, code;
    std::function<void(EvaluatorTest&)> break_it;
  };
  const std::vector<Case> cases = {
      {"judge crashed", "execute", "infra",
       [](EvaluatorTest& t) { t.lane().ready_error = Status::Unavailable("judge died"); }},
      {"problem not loaded", "execute", "infra",
       [](EvaluatorTest& t) { t.lane().load_error = Status::Timeout("load timed out"); }},
      {"run lost", "execute", "infra",
       [](EvaluatorTest& t) {
         t.lane().run = [](int, const execute::LoadInlineFn&) {
           return LaneFault("infra", "the judge died during trial 3");
         };
       }},
      {"busy", "execute", execute::kBusyCode,
       [](EvaluatorTest& t) {
         t.lane().run = [](int, const execute::LoadInlineFn&) {
           return LaneFault(execute::kBusyCode, "load spoiled the timing");
         };
       }},
      {"build worker died", "build", "infra",
       [](EvaluatorTest& t) {
         t.builder->build = [](const ExtensionSpec&) -> Result<build::Artifact> {
           return Status::Unavailable("the build worker exited");
         };
       }},
      {"toolchain part missing", "build", "environment",
       [](EvaluatorTest& t) {
         t.builder->build = [](const ExtensionSpec&) -> Result<build::Artifact> {
           build::Artifact a;
           a.environment = build::EnvironmentFault{"cxx", "c++", "no C++ compiler", "install g++"};
           return a;
         };
       }},
      {"run-time build's toolchain missing", "build", "environment",
       [&rt_call](EvaluatorTest& t) {
         t.builder->build = [](const ExtensionSpec& spec) -> Result<build::Artifact> {
           if (spec.name != "rt") return fakes::BuiltArtifact(spec.name);
           build::Artifact a;
           a.environment = build::EnvironmentFault{"cxx", "c++", "no C++ compiler", "install g++"};
           return a;
         };
         t.lane().run = [rt_call](int, const execute::LoadInlineFn& load_inline) {
           execute::ExecResult r = TimedRun(1.0);
           r.build_failed = !load_inline(rt_call).ok;
           r.outcome = execute::Outcome::kRuntimeError;  // what the candidate then did
           return r;
         };
       }},
      {"baselines failed", "baselines", "infra",
       [](EvaluatorTest& t) {
         t.lane().run = [](int, const execute::LoadInlineFn&) {
           return TimedRun(1.0, std::nullopt);
         };
         t.lane().baselines = {Status::Unavailable("the judge died timing the reference")};
       }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    state = std::make_shared<StoreState>();
    auto ev = Make();
    c.break_it(*this);
    Verdict v = ev->Evaluate(problem, candidate);
    EXPECT_EQ(v.status, VerdictStatus::kInfraError);
    EXPECT_TRUE(HasDiagnostic(v, c.stage, c.code)) << ToJson(v).dump(1);
    EXPECT_FALSE(v.reward);
    EXPECT_EQ(state->verdict_puts, 0);
    EXPECT_FALSE(ev->Lookup(problem, candidate));
  }
}

TEST_F(EvaluatorTest, WithoutLanesOnlyVerdictsDecidedBeforeTheRunAreGiven) {
  auto ev = Make(/*n_lanes=*/0);
  EXPECT_EQ(ev->lanes(), 0);
  Verdict v = ev->Execute(ev->Prepare(problem, candidate), 0);
  EXPECT_EQ(v.status, VerdictStatus::kInfraError);
  EXPECT_TRUE(HasDiagnostic(v, "execute", "infra"));
  EXPECT_EQ(state->verdict_puts, 0);
  EXPECT_EQ(builder->natives.load(), 0);  // no lane to load the timing helper into
  builder->build = [](const ExtensionSpec&) -> Result<build::Artifact> {
    build::Artifact a;
    a.error_text = "main.cpp:3: error: expected ';'";
    return a;
  };
  Prepared bad = ev->Prepare(problem, candidate + "\n# broken\n");
  EXPECT_TRUE(bad.final);
  EXPECT_EQ(ev->Execute(std::move(bad), 0).status, VerdictStatus::kCompileError);
  EXPECT_EQ(Stored(), 1u);
}

TEST_F(EvaluatorTest, AnImplausibleSpeedupIsMeasuredAgainAndTheSlowerRunCounts) {
  auto ev = Make();
  lane().run = [](int n, const execute::LoadInlineFn&) {
    if (n == 1) return TimedRun(0.1, 20.0);  // 200x
    execute::ExecResult r = TimedRun(0.5, 16.0);  // 32x, with more calls of each
    r.timing->summary.n = r.baselines->eager->summary.n = 14;
    return r;
  };
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kOk);
  EXPECT_EQ(lane().runs.load(), 2);
  ASSERT_NE(StageOf(v, "reverify"), nullptr);
  EXPECT_TRUE(StageOf(v, "reverify")->ok);
  EXPECT_DOUBLE_EQ(v.candidate_ms->median_ms, 0.5);
  EXPECT_DOUBLE_EQ(v.speedup_vs_eager.value_or(0), 32.0);
  // The baselines stage describes the reference of the run that counts, not the first run's.
  const StageRecord* b = StageOf(v, "baselines");
  ASSERT_NE(b, nullptr);
  EXPECT_DOUBLE_EQ(b->detail["eager"]["median"].get<double>(), 16.0);
  EXPECT_EQ(b->detail["eager"]["n"].get<int>(), 14);
  EXPECT_EQ(ToJson(v)["timing"]["candidate_ms"]["n"].get<int>(), 14);
}

TEST_F(EvaluatorTest, AReverificationThatFailsDecidesTheVerdict) {
  auto ev = Make();
  lane().run = [](int n, const execute::LoadInlineFn&) {
    if (n == 1) return TimedRun(0.1, 20.0);
    execute::ExecResult r = TimedRun(0.1, 20.0);
    r.outcome = execute::Outcome::kIncorrect;  // it remembered the first run's outputs (H06)
    r.trials_passed = 3;
    return r;
  };
  Verdict v = ev->Evaluate(problem, candidate);
  EXPECT_EQ(v.status, VerdictStatus::kIncorrect);
  EXPECT_EQ(v.trials_passed, 3);
  EXPECT_FALSE(v.speedup_vs_eager);
  EXPECT_EQ(Stored(), 1u);
}

}  // namespace
}  // namespace kf::eval
