// Pipeline: the in-run retry of load-spoiled timings, lanes kept busy, warm lanes.
#include "pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <thread>

#include "pipeline/pipeline_fakes.h"

namespace kf::pipeline {
namespace {

using namespace std::chrono_literals;
using fakes::Collector;
using fakes::FakeStages;
using fakes::Gate;

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

// Submits `text`, whose first run is spoiled ("busyonce", "lanediedonce"), then "slow", whose
// build is held until the retry has run or 10 s have passed; what came of it.
struct RetryWhileBuilding {
  bool retried_during_build = false;  // `text` ran again while "slow" still built
  int executions = 0;                  // of `text`
  size_t retried = 0;                  // Stats::retried
  std::vector<std::string> statuses;   // delivered, in order
};

RetryWhileBuilding RunAgainWhileBuilding(const std::string& text,
                                         std::chrono::milliseconds retry_after) {
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
    if (t != text) return;
    if (f->Executions(text) == 1) build_started.Wait();
    else retried.Open();
  };
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 1, .queue_capacity = 4,
                               .retry_after = retry_after});
  RetryWhileBuilding r;
  EXPECT_TRUE(p.Submit({"p.py", text}, c.Fn()));
  EXPECT_TRUE(p.Submit({"p.py", "slow"}, c.Fn()));
  r.retried_during_build = retried.Wait(5000ms);
  build_may_end.Open();
  p.Close();
  r.executions = f->Executions(text);
  r.retried = p.stats().retried;
  for (const auto& g : c.got) r.statuses.push_back(g.first);
  return r;
}

TEST(Pipeline, ARetryWaitsForBuildsNoLongerThanRetryAfter) {
  RetryWhileBuilding r = RunAgainWhileBuilding("busyonce", std::chrono::milliseconds(50));
  EXPECT_TRUE(r.retried_during_build);
  ASSERT_EQ(r.statuses.size(), 2u);
  EXPECT_EQ(r.statuses[0], "ok");
}

TEST(Pipeline, AJobWhoseLaneDiedRunsOnceMoreAtOnceEvenWhileABuildRuns) {
  // retry_after is far off: a dead lane's job waits neither for it nor for the build.
  RetryWhileBuilding r = RunAgainWhileBuilding("lanediedonce", std::chrono::milliseconds(60000));
  EXPECT_TRUE(r.retried_during_build);
  EXPECT_EQ(r.executions, 2);
  EXPECT_EQ(r.retried, 1u);
  ASSERT_EQ(r.statuses.size(), 2u);
  EXPECT_EQ(r.statuses[0], "ok");
  EXPECT_EQ(r.statuses[1], "ok");
}

TEST(Pipeline, EveryLaneGetsWork) {
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  f->n_lanes = 2;
  // The first candidate to run holds its lane until another starts, so the test does not depend on
  // builds outpacing one lane (on a loaded 2-core machine one lane could take every job).
  Gate other_started;
  std::atomic<int> started{0};
  f->on_execute = [&](const std::string&) {
    if (++started == 1) EXPECT_TRUE(other_started.Wait(10000ms)) << "no second lane took work";
    else other_started.Open();
    std::this_thread::sleep_for(20ms);
  };
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
  Gate warm;
  f->on_warm = [&](const std::string&) { warm.Wait(); };
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
  // A warm-up in progress is counted (the bench's timeline shows the lane busy), and its
  // time is the lane's and the warm-ups' both.
  EXPECT_EQ(p.stats().warming, 1u);
  EXPECT_EQ(p.stats().executing, 0u);
  std::this_thread::sleep_for(20ms);
  warm.Open();
  builds.Open();
  p.Close();
  EXPECT_EQ(p.stats().warming, 0u);
  EXPECT_GE(p.stats().warm_ms, 15.0);
  EXPECT_GE(p.stats().lane_busy_ms[0], p.stats().warm_ms);
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

TEST(Pipeline, AWarmUpStillRunningAtTheEndCountsInsideTheWallClock) {
  // Two lanes: one warms b.py and is held there while the other runs both jobs, so the last
  // job is delivered while a warm-up runs. Its lane time ends after that; the wall clock must
  // too (bench's report says lane busy <= wall).
  auto fake = std::make_unique<FakeStages>();
  FakeStages* f = fake.get();
  f->n_lanes = 2;
  Gate builds, hold_b;
  f->on_prepare = [&](const std::string&) { builds.Wait(); };
  f->on_warm = [&](const std::string& problem) {
    if (problem == "b.py") hold_b.Wait();
  };
  Collector c;
  Pipeline p(std::move(fake), {.build_threads = 2, .queue_capacity = 8});
  ASSERT_TRUE(p.Submit({"a.py", "good1"}, c.Fn()));
  ASSERT_TRUE(p.Submit({"b.py", "good2"}, c.Fn()));
  for (int i = 0; i < 500 && f->Warms().size() < 2; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(f->Warms().size(), 2u);
  builds.Open();
  std::thread opener([&] {
    for (int i = 0; i < 500 && f->executes.load() < 2; ++i) std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(300ms);  // well after the last job was delivered
    hold_b.Open();
  });
  p.Close();
  opener.join();
  ASSERT_EQ(c.got.size(), 2u);
  const auto st = p.stats();
  for (double busy : st.lane_busy_ms) EXPECT_LE(busy, st.wall_ms);
  EXPECT_GE(st.wall_ms, 300.0);
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

TEST(Pipeline, BuildOnlyEndsAtTheBuildStage) {
  auto fake = std::make_unique<FakeStages>();
  fake->n_lanes = 0;  // a build worker's Evaluator has none
  FakeStages* f = fake.get();
  std::mutex mu;
  std::map<std::string, std::pair<std::string, Outcome>> got;  // text -> status, outcome
  auto collect = [&](std::string text) {
    return [&, text](const Verdict& v, Outcome how) {
      std::lock_guard<std::mutex> g(mu);
      got[text] = {StatusName(v.status), how};
    };
  };
  Pipeline p(std::move(fake), {.build_threads = 2, .build_only = true});
  for (std::string text : {"good", "bad", "stored", "wrong"}) {
    ASSERT_TRUE(p.Submit({"p.py", text}, collect(text)));
  }
  EXPECT_EQ(p.Describe("p.py").status().code(), Code::kUnavailable);
  p.Close();
  EXPECT_EQ(got["good"].second, Outcome::kBuilt);  // for lanes elsewhere
  EXPECT_EQ(got["wrong"].second, Outcome::kBuilt);
  EXPECT_EQ(got["bad"], std::make_pair(std::string("compile_error"), Outcome::kEvaluated));
  EXPECT_EQ(got["stored"], std::make_pair(std::string("ok"), Outcome::kFromStore));
  EXPECT_EQ(f->executes.load(), 0);  // only the final verdict was scored, without a lane
  EXPECT_TRUE(f->Warms().empty());
  Stats s = p.stats();
  EXPECT_EQ(s.built, 2u);
  EXPECT_EQ(s.done, 4u);
  EXPECT_EQ(s.by_status.size(), 2u);  // compile_error and the stored ok; built jobs have none
  EXPECT_TRUE(s.lane_busy_ms.empty());
}

}  // namespace
}  // namespace kf::pipeline
