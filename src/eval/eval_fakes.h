// Fake parts for the Evaluator's tests (eval_test.cc): a lane, a builder, a store and a clock
// with no process, compiler, database or GPU behind them. Each counts its calls and takes a
// hook or a canned answer, so a test can make it crash, hang (the clock moves on), refuse
// writes or report a busy machine.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "eval/parts.h"

namespace kf::eval::fakes {

// Time that moves only when told: Advance from a hook stands for a stage that took that long.
class FakeClock : public SteadyClock {
 public:
  std::chrono::steady_clock::time_point Now() override {
    return std::chrono::steady_clock::time_point(std::chrono::milliseconds(ms_.load()));
  }
  void Advance(std::chrono::milliseconds d) { ms_ += d.count(); }

 private:
  std::atomic<int64_t> ms_{1'000'000};
};

// A timed run: `median_ms` per call, each sample the same; with `eager_ms`, the reference's
// interleaved batches too (ExecOptions::interleave_baselines).
inline execute::ExecResult TimedRun(double median_ms, std::optional<double> eager_ms = 2.0) {
  execute::ExecResult r;
  r.outcome = execute::Outcome::kOk;
  r.trials_passed = r.trials_total = 5;
  r.load_ms = 10;
  r.timing_ms = 50;
  execute::TimingResult t;
  t.summary.median_ms = t.summary.p10_ms = t.summary.p90_ms = median_ms;
  t.summary.p25_ms = t.summary.p75_ms = median_ms;
  t.summary.n = 10;
  t.samples_ms.assign(10, median_ms);
  t.stop_reason = "fake";
  r.timing = t;
  if (eager_ms) {
    execute::TimingResult e = t;
    e.summary.median_ms = e.summary.p10_ms = e.summary.p90_ms = *eager_ms;
    e.summary.p25_ms = e.summary.p75_ms = *eager_ms;
    e.samples_ms.assign(10, *eager_ms);
    r.baselines = execute::BaselineResult{};
    r.baselines->eager = e;
  }
  return r;
}

// A run the lane itself failed (its judge died, a wait expired): infra_error, with `code`.
inline execute::ExecResult LaneFault(const std::string& code, const std::string& message) {
  execute::ExecResult r;
  r.outcome = execute::Outcome::kInfraError;
  Diagnostic d;
  d.stage = "execute";
  d.code = code;
  d.message = message;
  r.diagnostics.push_back(d);
  return r;
}

struct FakeLane : LaneRunner {
  std::atomic<int> readies{0}, loads{0}, baseline_timings{0}, reference_warms{0}, runs{0},
      restarts{0};
  std::optional<Status> ready_error, load_error, restart_error;
  // False: its judge or zygote died (a hook sets it); Restart makes it true again.
  std::atomic<bool> alive{true};
  // The n-th Run (1-based) answers run(n, load_inline); by default a timed ok run.
  std::function<execute::ExecResult(int, const execute::LoadInlineFn&)> run;
  // TimeBaselines answers these in order, the last one again once they run out.
  std::deque<Result<execute::BaselineResult>> baselines;

  Result<execute::DeviceInfo> Ready(const std::filesystem::path&, const std::string&) override {
    ++readies;
    if (ready_error) return *ready_error;
    execute::DeviceInfo d;
    d.device = "cpu";
    d.name = "Fake CPU";
    d.torch_version = "0.0";
    return d;
  }
  Result<execute::ProblemInfo> LoadProblem(const std::string& id, const std::filesystem::path&,
                                           uint64_t init_seed, bool) override {
    ++loads;
    if (load_error) return *load_error;
    execute::ProblemInfo p;
    p.id = id;
    p.init_seed = init_seed;
    return p;
  }
  Result<execute::BaselineResult> TimeBaselines(const execute::ProblemInfo&,
                                                const execute::TimingOptions&, uint64_t) override {
    ++baseline_timings;
    if (baselines.empty()) return Status::Internal("the test gave this lane no baselines");
    Result<execute::BaselineResult> r = baselines.front();
    if (baselines.size() > 1) baselines.pop_front();
    return r;
  }
  Status WarmReference(const execute::ProblemInfo&, const execute::TimingOptions&,
                       uint64_t) override {
    ++reference_warms;
    return Status::Ok();
  }
  execute::ExecResult Run(const std::string&, const execute::ProblemInfo&, const std::string&,
                          const execute::LoadInlineFn& load_inline,
                          const execute::ExecOptions&) override {
    int n = ++runs;
    return run ? run(n, load_inline) : TimedRun(1.0);
  }
  bool Alive() override { return alive; }
  Status Restart() override {
    ++restarts;
    if (restart_error) return *restart_error;
    alive = true;
    return Status::Ok();
  }
};

// The candidate's process died in its run: runtime_error, as the lane reports a crash.
inline execute::ExecResult Crash() {
  execute::ExecResult r;
  r.outcome = execute::Outcome::kRuntimeError;
  r.load_ms = 10;
  Diagnostic d;
  d.stage = "correctness";
  d.code = "crash";
  d.message = "the candidate process died during the first trial: signal 9 (Killed)";
  r.diagnostics.push_back(d);
  return r;
}

// A built artifact, as a compile that succeeded gives it.
inline build::Artifact BuiltArtifact(const std::string& name) {
  build::Artifact a;
  a.ok = true;
  a.key = "key-" + name;
  a.so_path = "/nonexistent/" + name + ".so";
  a.module_name = name;
  return a;
}

struct FakeBuilder : ArtifactBuilder {
  std::atomic<int> fingerprints{0}, builds{0}, natives{0};
  // Answers every Build; by default the artifact is built. Called from several threads.
  std::function<Result<build::Artifact>(const ExtensionSpec&)> build;

  Result<nlohmann::json> Fingerprint() override {
    ++fingerprints;
    return nlohmann::json{{"toolchain", "fake"}};
  }
  Result<build::Artifact> Build(const ExtensionSpec& spec) override {
    ++builds;
    return build ? build(spec) : BuiltArtifact(spec.name);
  }
  Result<build::Artifact> BuildNative() override {
    ++natives;
    return BuiltArtifact("kforge_native");
  }
};

// What the store holds; shared, so that a second Evaluator sees what the first one stored.
struct StoreState {
  std::mutex mu;
  std::map<std::string, Verdict> verdicts;
  std::map<std::string, nlohmann::json> baselines;
  int verdict_puts = 0, baseline_puts = 0;  // writes asked for, failed ones too
  bool fail_writes = false;                 // a full disk, a locked database
};

struct FakeStore : VerdictStore {
  std::shared_ptr<StoreState> s = std::make_shared<StoreState>();

  Result<std::optional<Verdict>> GetVerdict(const std::string& key) override {
    std::lock_guard<std::mutex> g(s->mu);
    auto it = s->verdicts.find(key);
    if (it == s->verdicts.end()) return std::optional<Verdict>();
    return std::optional<Verdict>(it->second);
  }
  Status PutVerdict(const std::string& key, const Verdict& v) override {
    std::lock_guard<std::mutex> g(s->mu);
    ++s->verdict_puts;
    if (s->fail_writes) return Status::IoError("disk I/O error");
    s->verdicts[key] = v;
    return Status::Ok();
  }
  Result<std::optional<nlohmann::json>> GetBaseline(const std::string& key) override {
    std::lock_guard<std::mutex> g(s->mu);
    auto it = s->baselines.find(key);
    if (it == s->baselines.end()) return std::optional<nlohmann::json>();
    return std::optional<nlohmann::json>(it->second);
  }
  Status PutBaseline(const std::string& key, const nlohmann::json& value) override {
    std::lock_guard<std::mutex> g(s->mu);
    ++s->baseline_puts;
    if (s->fail_writes) return Status::IoError("disk I/O error");
    s->baselines[key] = value;
    return Status::Ok();
  }
};

}  // namespace kf::eval::fakes
