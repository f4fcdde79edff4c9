#include "pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace kf::pipeline {
namespace {

using namespace std::chrono_literals;

// A gate tests open when they want a stage to proceed.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> g(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool Wait(std::chrono::milliseconds limit = 5000ms) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, limit, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Fake stages: texts starting with "stored" are in the store, "bad" fails to build (final),
// anything else is prepared then executed. Hooks let tests block a stage.
struct FakeStages : Stages {
  int n_lanes = 1;
  std::atomic<int> prepares{0}, executes{0}, lookups{0};
  std::atomic<int> active{0}, max_active{0};  // Prepare + Execute running at once
  std::function<void(const std::string&)> on_prepare, on_execute;
  std::vector<bool> trusted;  // Prepare's job.problem_trusted, in call order
  std::atomic<int> in_execute{0}, describe_beside_execute{0};
  std::mutex mu;
  std::set<int> lanes_used;

  int lanes() const override { return n_lanes; }
  std::optional<Verdict> Lookup(const std::filesystem::path&, const std::string& text) override {
    ++lookups;
    if (text.rfind("stored", 0) != 0) return std::nullopt;
    Verdict v;
    v.status = VerdictStatus::kOk;
    return v;
  }
  eval::Prepared Prepare(const Job& job) override {
    const std::filesystem::path& problem = job.problem;
    const std::string& text = job.text;
    {
      std::lock_guard<std::mutex> g(mu);
      trusted.push_back(job.problem_trusted);
    }
    Enter();
    ++prepares;
    if (on_prepare) on_prepare(text);
    eval::Prepared p;
    p.problem_path = problem;
    p.text = text;
    if (text.rfind("bad", 0) == 0) {
      p.final = true;
      p.verdict.status = VerdictStatus::kCompileError;
    }
    Leave();
    return p;
  }
  Verdict Execute(eval::Prepared p, int lane) override {
    if (p.final) return p.verdict;
    Enter();
    ++in_execute;
    ++executes;
    {
      std::lock_guard<std::mutex> g(mu);
      lanes_used.insert(lane);
    }
    int n;
    {
      std::lock_guard<std::mutex> g(mu);
      n = ++executions[p.text];
    }
    if (on_execute) on_execute(p.text);
    Verdict v;
    v.status = p.text.rfind("wrong", 0) == 0 ? VerdictStatus::kIncorrect : VerdictStatus::kOk;
    // "busyonce": its first timing is spoiled by load; "busyalways": every one is.
    if (p.text == "busyalways" || (p.text == "busyonce" && n == 1)) {
      v.status = VerdictStatus::kInfraError;
      Diagnostic d;
      d.stage = "timing";
      d.code = execute::kBusyCode;
      v.diagnostics.push_back(d);
    }
    --in_execute;
    Leave();
    return v;
  }
  std::map<std::string, int> executions;  // per text
  int Executions(const std::string& text) {
    std::lock_guard<std::mutex> g(mu);
    return executions[text];
  }
  std::vector<std::string> warms;  // problems, in the order Warm was called
  void Warm(const Job& job, int) override {
    std::lock_guard<std::mutex> g(mu);
    warms.push_back(job.problem.string());
  }
  Result<eval::Evaluator::ProblemFacts> Describe(const std::filesystem::path& problem,
                                                 int lane) override {
    if (in_execute.load() > 0) ++describe_beside_execute;
    eval::Evaluator::ProblemFacts f;
    f.device = problem.string() + "@lane" + std::to_string(lane);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (in_execute.load() > 0) ++describe_beside_execute;
    return f;
  }
  std::vector<std::string> Warms() {
    std::lock_guard<std::mutex> g(mu);
    return warms;
  }
  void Enter() {
    int a = ++active;
    int m = max_active.load();
    while (a > m && !max_active.compare_exchange_weak(m, a)) {
    }
  }
  void Leave() { --active; }
};

struct Collector {
  std::mutex mu;
  std::vector<std::pair<std::string, bool>> got;  // status, from_store
  DoneFn Fn() {
    return [this](const Verdict& v, bool from_store) {
      std::lock_guard<std::mutex> g(mu);
      got.emplace_back(StatusName(v.status), from_store);
    };
  }
};

TEST(Pipeline, EveryJobDoneOnceWithItsStatus) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 3, .queue_capacity = 4});
  for (int i = 0; i < 20; ++i) {
    std::string text = (i % 4 == 0   ? "bad"
                        : i % 4 == 1 ? "wrong"
                        : i % 4 == 2 ? "stored"
                                     : "good") +
                       std::to_string(i);
    ASSERT_TRUE(p.Submit({"p.py", text}, c.Fn()));
  }
  p.Close();
  ASSERT_EQ(c.got.size(), 20u);
  Stats s = p.stats();
  EXPECT_EQ(s.done, 20u);
  EXPECT_EQ(s.from_store, 5u);
  EXPECT_EQ(s.evaluated, 15u);
  EXPECT_EQ(s.by_status["compile_error"], 5u);
  EXPECT_EQ(s.by_status["incorrect"], 5u);
  EXPECT_EQ(s.by_status["ok"], 10u);
  EXPECT_EQ(f->prepares.load(), 15);
  EXPECT_EQ(f->executes.load(), 10);
  EXPECT_EQ(s.in_flight, 0u);
  EXPECT_FALSE(p.Submit({"p.py", "late"}, c.Fn()));  // closed
}

TEST(Pipeline, IdenticalJobsInFlightAreEvaluatedOnce) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  Gate gate;
  f->on_prepare = [&](const std::string&) { gate.Wait(); };
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 2, .queue_capacity = 8});
  ASSERT_TRUE(p.Submit({"p.py", "same"}, c.Fn()));
  ASSERT_TRUE(p.Submit({"./p.py", "same"}, c.Fn()));  // same file, spelled differently
  ASSERT_TRUE(p.TrySubmit({"p.py", "same"}, c.Fn()));
  ASSERT_TRUE(p.Submit({"q.py", "same"}, c.Fn()));  // another problem: its own job
  gate.Open();
  p.Close();
  EXPECT_EQ(c.got.size(), 4u);
  EXPECT_EQ(f->prepares.load(), 2);
  EXPECT_EQ(p.stats().deduplicated, 2u);
  EXPECT_EQ(p.stats().done, 2u);
}

TEST(Pipeline, FullIntakeBlocksSubmitAndFailsTrySubmit) {
  auto fake = std::make_unique<FakeStages>();
  Gate gate, started;
  fake->on_prepare = [&](const std::string&) {
    started.Open();
    gate.Wait();
  };
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 1, .queue_capacity = 1});
  ASSERT_TRUE(p.Submit({"p.py", "a"}, c.Fn()));
  ASSERT_TRUE(started.Wait());                   // "a" is in Prepare, the intake is empty
  ASSERT_TRUE(p.Submit({"p.py", "b"}, c.Fn()));  // fills the intake
  EXPECT_FALSE(p.TrySubmit({"p.py", "c"}, c.Fn()));
  EXPECT_TRUE(p.TrySubmit({"p.py", "b"}, c.Fn()));  // identical to a queued job: no new work
  auto blocked = std::async(std::launch::async, [&] { return p.Submit({"p.py", "d"}, c.Fn()); });
  EXPECT_EQ(blocked.wait_for(200ms), std::future_status::timeout);  // backpressure
  gate.Open();
  EXPECT_TRUE(blocked.get());
  p.Close();
  EXPECT_EQ(c.got.size(), 4u);
  EXPECT_EQ(p.stats().done, 3u);
}

// A time limit or ^C: the job on the lane and the one being built finish; every job still
// waiting is done at once as infra_error "cancelled" (so bench writes what it has, and a rerun
// evaluates the rest); nothing new is accepted.
TEST(Pipeline, CancelEndsWaitingJobsAndLetsRunningOnesFinish) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  Gate exec_gate, exec_started, build_gate, build_started;
  f->on_execute = [&](const std::string&) {
    exec_started.Open();
    exec_gate.Wait();
  };
  f->on_prepare = [&](const std::string& text) {
    if (text != "second") return;
    build_started.Open();
    build_gate.Wait();
  };
  std::mutex mu;
  std::map<std::string, std::string> got;  // text -> status (and code when cancelled)
  auto collect = [&](std::string text) {
    return [&, text](const Verdict& v, bool) {
      std::lock_guard<std::mutex> g(mu);
      std::string code = v.diagnostics.empty() ? "" : "/" + v.diagnostics[0].code;
      got[text] = StatusName(v.status) + code;
    };
  };
  Pipeline p(std::move(fake), {.build_threads = 1, .queue_capacity = 8, .warm_lanes = false});
  ASSERT_TRUE(p.Submit({"p.py", "first"}, collect("first")));
  ASSERT_TRUE(exec_started.Wait());  // "first" runs on the lane
  ASSERT_TRUE(p.Submit({"p.py", "second"}, collect("second")));
  ASSERT_TRUE(build_started.Wait());  // "second" is being built
  for (const char* t : {"third", "fourth"}) ASSERT_TRUE(p.Submit({"p.py", t}, collect(t)));
  p.Cancel();
  {
    std::lock_guard<std::mutex> g(mu);  // the waiting ones are done already
    EXPECT_EQ(got["third"], "infra_error/cancelled");
    EXPECT_EQ(got["fourth"], "infra_error/cancelled");
    EXPECT_EQ(got.count("first"), 0u);
  }
  EXPECT_FALSE(p.Submit({"p.py", "fifth"}, collect("fifth")));
  build_gate.Open();  // built after the cancel: its lane turn never comes
  exec_gate.Open();
  p.Close();
  EXPECT_EQ(got["first"], "ok");
  EXPECT_EQ(got["second"], "infra_error/cancelled");
  EXPECT_EQ(got.size(), 4u);
  EXPECT_EQ(f->Executions("second"), 0);
  EXPECT_EQ(f->prepares.load(), 2);
}

// Where a job is, as the reward service reports it: building, then built (with the stages so
// far), then on a lane; a job answered by a final build verdict never reaches a lane.
TEST(Pipeline, WatchersSeeEveryStageInOrder) {
  auto fake = std::make_unique<FakeStages>();
  Pipeline p(std::move(fake), {.build_threads = 1, .queue_capacity = 4, .warm_lanes = false});
  std::mutex mu;
  std::map<std::string, std::vector<JobStage>> seen;
  auto watch = [&](std::string text) {
    return [&, text](JobStage s, const Verdict&) {
      std::lock_guard<std::mutex> g(mu);
      seen[text].push_back(s);
    };
  };
  Collector c;
  ASSERT_TRUE(p.Submit({"p.py", "good"}, c.Fn(), watch("good")));
  ASSERT_TRUE(p.Submit({"p.py", "bad"}, c.Fn(), watch("bad")));
  p.Close();
  using S = JobStage;
  EXPECT_EQ(seen["good"], (std::vector<JobStage>{S::kBuilding, S::kBuilt, S::kExecuting}));
  EXPECT_EQ(seen["bad"], (std::vector<JobStage>{S::kBuilding}));
}

// Describe runs on a lane, never beside a candidate's execution on it, and Evaluate waits for
// one verdict: what generate and mcp need from the one engine.
TEST(Pipeline, DescribeAndEvaluateShareTheLane) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  f->on_execute = [](const std::string&) { std::this_thread::sleep_for(20ms); };
  Pipeline p(std::move(fake), {.build_threads = 4, .queue_capacity = 8, .warm_lanes = false});
  std::vector<std::future<Verdict>> verdicts;
  for (int i = 0; i < 6; ++i) {
    verdicts.push_back(std::async(std::launch::async, [&p, i] {
      return p.Evaluate({"p.py", "good" + std::to_string(i)});
    }));
  }
  for (int i = 0; i < 3; ++i) {
    auto facts = p.Describe("q.py");
    ASSERT_TRUE(facts.ok()) << facts.status().message();
    EXPECT_EQ(facts->device, "q.py@lane0");
  }
  for (auto& v : verdicts) EXPECT_EQ(v.get().status, VerdictStatus::kOk);
  p.Close();
  EXPECT_EQ(f->executes.load(), 6);
  EXPECT_EQ(f->describe_beside_execute.load(), 0);
  EXPECT_EQ(p.Evaluate({"p.py", "late"}).status, VerdictStatus::kInfraError);  // closed
}

TEST(Pipeline, TrustReachesPrepareAndIsNotPartOfTheJob) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  Pipeline p(std::move(fake), {.build_threads = 1, .warm_lanes = false});
  EXPECT_EQ(p.Evaluate({"p.py", "a", /*problem_trusted=*/false}).status, VerdictStatus::kOk);
  EXPECT_EQ(p.Evaluate({"p.py", "b"}).status, VerdictStatus::kOk);
  p.Close();
  EXPECT_EQ(f->trusted, (std::vector<bool>{false, true}));
}

TEST(Pipeline, BuildsOverlapExecutionOfEarlierJobs) {
  auto fake = std::make_unique<FakeStages>();
  Gate second_prepared;
  fake->on_prepare = [&](const std::string& t) {
    if (t == "good2") second_prepared.Open();
  };
  std::atomic<bool> overlapped{false};
  fake->on_execute = [&](const std::string& t) {
    if (t == "good1") overlapped = second_prepared.Wait(3000ms);  // deadlocks if serial
  };
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 1, .queue_capacity = 4});
  ASSERT_TRUE(p.Submit({"p.py", "good1"}, c.Fn()));
  ASSERT_TRUE(p.Submit({"p.py", "good2"}, c.Fn()));
  p.Close();
  EXPECT_TRUE(overlapped);
  EXPECT_GT(p.stats().lane_busy_ms[0], 0.0);
}

TEST(Pipeline, ATimingSpoiledByLoadRunsOnceMoreWhenNoBuildRuns) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  Gate build_started, build_may_end;
  f->on_prepare = [&](const std::string& t) {
    if (t == "slow") {
      build_started.Open();
      build_may_end.Wait();
    }
  };
  f->on_execute = [&](const std::string& t) {
    if (t == "busyonce") build_started.Wait();  // its first timing ends while "slow" builds
  };
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 1, .queue_capacity = 4});
  ASSERT_TRUE(p.Submit({"p.py", "busyonce"}, c.Fn()));
  ASSERT_TRUE(p.Submit({"p.py", "slow"}, c.Fn()));
  ASSERT_TRUE(build_started.Wait());
  for (int i = 0; i < 200 && f->Executions("busyonce") < 1; ++i) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(100ms);
  // Spoiled, held back (not delivered) and not tried again while a build runs.
  EXPECT_EQ(f->Executions("busyonce"), 1);
  {
    std::lock_guard<std::mutex> g(c.mu);
    EXPECT_TRUE(c.got.empty());
  }
  build_may_end.Open();
  p.Close();
  EXPECT_EQ(f->Executions("busyonce"), 2);
  EXPECT_EQ(f->prepares.load(), 3);  // the retry prepares again (a cache hit in real life)
  ASSERT_EQ(c.got.size(), 2u);
  EXPECT_EQ(c.got[0].first, "ok");
  EXPECT_EQ(c.got[1].first, "ok");
  EXPECT_EQ(p.stats().retried, 1u);
  EXPECT_EQ(p.stats().by_status.count("infra_error"), 0u);
}

TEST(Pipeline, ASecondSpoiledTimingIsDeliveredAndRetryCanBeOff) {
  for (bool retry : {true, false}) {
    auto fake = std::make_unique<FakeStages>();
    FakeStages* f = fake.get();
    Collector c;
    Pipeline p(std::move(fake), {.build_threads = 1, .queue_capacity = 4, .retry_busy = retry});
    ASSERT_TRUE(p.Submit({"p.py", "busyalways"}, c.Fn()));
    p.Close();
    EXPECT_EQ(f->Executions("busyalways"), retry ? 2 : 1);
    ASSERT_EQ(c.got.size(), 1u);
    EXPECT_EQ(c.got[0].first, "infra_error");
    EXPECT_EQ(p.stats().retried, retry ? 1u : 0u);
  }
}

TEST(Pipeline, ARetryWaitsForBuildsNoLongerThanRetryAfter) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  Gate build_started, build_may_end, retried;
  f->on_prepare = [&](const std::string& t) {
    if (t == "slow") {
      build_started.Open();
      build_may_end.Wait(10000ms);
    }
  };
  f->on_execute = [&](const std::string& t) {
    if (t != "busyonce") return;
    if (f->Executions("busyonce") == 1) build_started.Wait();
    else retried.Open();
  };
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 1, .queue_capacity = 4,
                               .retry_after = std::chrono::milliseconds(50)});
  ASSERT_TRUE(p.Submit({"p.py", "busyonce"}, c.Fn()));
  ASSERT_TRUE(p.Submit({"p.py", "slow"}, c.Fn()));
  EXPECT_TRUE(retried.Wait(5000ms));  // while "slow" still builds
  build_may_end.Open();
  p.Close();
  ASSERT_EQ(c.got.size(), 2u);
  EXPECT_EQ(c.got[0].first, "ok");
}

TEST(Pipeline, EveryLaneGetsWork) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  f->n_lanes = 2;
  f->on_execute = [](const std::string&) { std::this_thread::sleep_for(20ms); };
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 2, .queue_capacity = 8});
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(p.Submit({"p.py", "good" + std::to_string(i)}, c.Fn()));
  p.Close();
  EXPECT_EQ(f->lanes_used.size(), 2u);
  Stats s = p.stats();
  ASSERT_EQ(s.lane_busy_ms.size(), 2u);
  EXPECT_GT(s.lane_busy_ms[0], 0.0);
  EXPECT_GT(s.lane_busy_ms[1], 0.0);
  EXPECT_GE(s.wall_ms, 80.0);  // 8 x 20 ms over two lanes
}

TEST(Pipeline, SequentialRunsOneStageAtATime) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  f->on_execute = [](const std::string&) { std::this_thread::sleep_for(5ms); };
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 4, .queue_capacity = 8, .sequential = true});
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(p.Submit({"p.py", "good" + std::to_string(i)}, c.Fn()));
  p.Close();
  EXPECT_EQ(f->max_active.load(), 1);
  EXPECT_EQ(c.got.size(), 6u);
}

TEST(Pipeline, ReuseStoredOffEvaluatesAgain) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 1, .queue_capacity = 2, .reuse_stored = false});
  ASSERT_TRUE(p.Submit({"p.py", "stored1"}, c.Fn()));
  p.Close();
  EXPECT_EQ(f->lookups.load(), 0);
  EXPECT_EQ(f->prepares.load(), 1);
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_FALSE(c.got[0].second);
}

TEST(Pipeline, IdleLanesPrepareEachProblemOnceWhileItsFirstBuildRuns) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  Gate builds;
  f->on_prepare = [&](const std::string&) { builds.Wait(); };
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 2, .queue_capacity = 8});
  ASSERT_TRUE(p.Submit({"a.py", "good1"}, c.Fn()));
  ASSERT_TRUE(p.Submit({"a.py", "good2"}, c.Fn()));
  ASSERT_TRUE(p.Submit({"b.py", "good3"}, c.Fn()));
  ASSERT_TRUE(p.Submit({"c.py", "stored4"}, c.Fn()));  // answered by the store: no lane work
  // Every build is still blocked, and the lane already prepared what they will need.
  for (int i = 0; i < 500 && (f->Warms().empty() || f->prepares.load() < 2); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(f->Warms(), std::vector<std::string>{"a.py"});  // b.py's build has not started
  EXPECT_EQ(f->prepares.load(), 2);
  EXPECT_EQ(f->executes.load(), 0);
  builds.Open();
  p.Close();
  // b.py's warm-up was queued when its build began; it runs only if the lane found no built
  // job waiting, and is dropped once every job is done. Never twice, never for c.py.
  std::vector<std::string> w = f->Warms();
  ASSERT_GE(w.size(), 1u);
  EXPECT_EQ(w[0], "a.py");
  if (w.size() > 1) {
    EXPECT_EQ(w, (std::vector<std::string>{"a.py", "b.py"}));
  }
  EXPECT_LE(w.size(), 2u);
  EXPECT_EQ(p.stats().warmed, w.size());
  EXPECT_EQ(c.got.size(), 4u);
}

TEST(Pipeline, SequentialModeAndWarmLanesOffPrepareNothingAhead) {
  for (bool sequential : {true, false}) {
    auto fake = std::make_unique<FakeStages>();
    FakeStages* f = fake.get();
    Collector c;
    Pipeline p(std::move(fake), {.build_threads = 1, .queue_capacity = 4,
                                 .sequential = sequential, .warm_lanes = sequential});
    ASSERT_TRUE(p.Submit({"a.py", "good1"}, c.Fn()));
    ASSERT_TRUE(p.Submit({"b.py", "good2"}, c.Fn()));
    p.Close();
    EXPECT_TRUE(f->Warms().empty()) << (sequential ? "sequential" : "warm_lanes off");
    EXPECT_EQ(c.got.size(), 2u);
  }
}

}  // namespace
}  // namespace kf::pipeline
