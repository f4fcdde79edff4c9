// Pipeline: every job done once, intake limits, cancel, watchers, lanes shared by describe.
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
    return [&, text](const Verdict& v, Outcome) {
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

}  // namespace
}  // namespace kf::pipeline
