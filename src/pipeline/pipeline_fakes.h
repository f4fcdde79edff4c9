// Fake stages and helpers for the Pipeline tests (pipeline_test.cc, pipeline_lanes_test.cc):
// no process, build or GPU; hooks let a test hold a stage.
#pragma once

#include "pipeline/pipeline.h"
#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace kf::pipeline::fakes {

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
  std::function<void(const std::string&)> on_warm;  // after the warm-up is noted
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
    // "lanediedonce": its first run's lane died under it (a killed judge).
    if (p.text == "lanediedonce" && n == 1) {
      v.status = VerdictStatus::kInfraError;
      Diagnostic d;
      d.stage = "execute";
      d.code = execute::kLaneDiedCode;
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
    {
      std::lock_guard<std::mutex> g(mu);
      warms.push_back(job.problem.string());
    }
    if (on_warm) on_warm(job.problem.string());
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
    return [this](const Verdict& v, Outcome how) {
      std::lock_guard<std::mutex> g(mu);
      got.emplace_back(StatusName(v.status), how == Outcome::kFromStore);
    };
  }
};

}  // namespace kf::pipeline::fakes
