// The in-process engine behind `kforge serve` without --redis: jobs of the reward service on
// kf::pipeline::Pipeline, the one engine (bounded queues, warm lanes, the retry of timings the
// machine's load spoiled). This file keeps only what the service adds: job ids and states,
// admission control, and the answers of jobs done in this process.
#include <condition_variable>
#include <map>
#include <mutex>

#include "pipeline/pipeline.h"
#include "queue/engine.h"

namespace kf::queue {
namespace {

// Done jobs are remembered in memory up to this many (all but infra errors are in the store).
constexpr size_t kMaxRemembered = 200'000;

class LocalEngine : public Engine {
 public:
  LocalEngine(LocalEngineOptions opt, std::unique_ptr<eval::Evaluator> ev)
      : opt_(std::move(opt)),
        lanes_(ev->lanes()),
        ev_(ev.get()),
        pipeline_(pipeline::EvaluatorStages(std::move(ev)), PipelineOptionsFor(opt_, lanes_)) {}

  // Jobs in hand are finished; queued ones end infra_error "cancelled" (never stored: their
  // clients resubmit the same ids to the next process).
  ~LocalEngine() override {
    pipeline_.Cancel();
    pipeline_.Close();
  }

  const char* Name() const override { return "embedded"; }

  Result<JobView> Submit(const JobSpec& job) override {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (auto v = ViewLocked(job.id); v.state != JobView::State::kUnknown) {
        if (!(v.result && v.result->verdict.status == VerdictStatus::kInfraError)) return v;
        jobs_.erase(job.id);  // an infrastructure failure is tried again
      }
    }
    // Outside the lock: SQLite may wait. The store's key covers the evaluator's settings and
    // environment too (eval::VerdictKey), so only a verdict made exactly so comes back, and a
    // stored one is answered at once.
    auto path =
        MaterializeProblem(opt_.eval.cache_dir, job.problem_id, job.problem_hash, job.problem_text);
    std::optional<Verdict> stored;
    if (path.ok()) stored = ev_->Lookup(*path, job.candidate);
    std::lock_guard<std::mutex> g(mu_);
    if (auto v = ViewLocked(job.id); v.state != JobView::State::kUnknown) return v;
    if (!path.ok()) {
      Remember(job.id, InfraResult(job, path.status().message(), "embedded", 1));
      return ViewLocked(job.id);
    }
    if (stored) {
      Remember(job.id, JobResult{*stored, "store", 0});
      return ViewLocked(job.id);
    }
    if (in_flight_ >= opt_.max_in_flight) {
      return Status::Unavailable("the evaluation queue is full (" + std::to_string(in_flight_) +
                                 " jobs in flight)");
    }
    const std::string id = job.id;
    jobs_[id] = Entry{JobView::State::kQueued, std::nullopt};
    ++in_flight_;
    // Under mu_: the callbacks, on pipeline threads, wait for it, so they see the entry.
    if (!pipeline_.TrySubmit(
            pipeline::Job{*path, job.candidate, job.problem_trusted},
            [this, id](const Verdict& v, pipeline::Outcome) { Finish(id, v); },
            [this, id](pipeline::JobStage s, const Verdict&) { Moved(id, s); })) {
      jobs_.erase(id);
      --in_flight_;
      return Status::Unavailable("the evaluation queue is full (the service is stopping)");
    }
    return ViewLocked(id);
  }

  // Jobs of this process only: a job id names no store entry (the store's key also covers the
  // environment), so after a restart a client submits again and gets the stored verdict.
  Result<JobView> Get(const std::string& id) override {
    std::lock_guard<std::mutex> g(mu_);
    return ViewLocked(id);
  }

  Result<JobView> Wait(const std::string& id, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait_for(lk, timeout, [&] {
      auto it = jobs_.find(id);
      return it == jobs_.end() || it->second.result.has_value();
    });
    return ViewLocked(id);
  }

  Result<EngineStats> Stats() override {
    pipeline::Stats ps = pipeline_.stats();
    std::lock_guard<std::mutex> g(mu_);
    EngineStats s = stats_;
    s.queue_depth["build"] = static_cast<long long>(ps.intake_depth + ps.building);
    s.queue_depth["gpu"] = static_cast<long long>(ps.ready_depth + ps.executing);
    s.workers["build"] = std::max(1, opt_.eval.build_workers);
    s.workers["gpu"] = lanes_;
    s.in_flight = in_flight_;
    s.capacity = opt_.max_in_flight;
    return s;
  }

 private:
  struct Entry {
    JobView::State state = JobView::State::kQueued;  // kQueued, kRunning or kDone
    std::optional<JobResult> result;                 // kDone
  };

  static pipeline::PipelineOptions PipelineOptionsFor(const LocalEngineOptions& o, int lanes) {
    pipeline::PipelineOptions po;
    po.build_threads = std::max(1, o.eval.build_workers);
    // Every admitted job is accepted at once (admission is max_in_flight, in Submit); builds
    // run only a few candidates ahead of the lanes, as in bench.
    po.intake_capacity = static_cast<size_t>(std::max<long long>(1, o.max_in_flight));
    po.queue_capacity = static_cast<size_t>(4 * (po.build_threads + std::max(1, lanes)));
    po.reuse_stored = false;  // Submit looked the store up already
    return po;
  }

  JobView ViewLocked(const std::string& id) {
    JobView v;
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return v;
    v.state = it->second.state;
    v.result = it->second.result;
    return v;
  }

  void Remember(const std::string& id, JobResult r) {
    if (jobs_.size() >= kMaxRemembered) {
      for (auto it = jobs_.begin(); it != jobs_.end();) {
        it = it->second.result ? jobs_.erase(it) : std::next(it);
      }
    }
    Entry& e = jobs_[id];
    e.state = JobView::State::kDone;
    e.result = std::move(r);
  }

  // A build thread or a lane took the job (kRunning), or it is built and waits for a lane.
  void Moved(const std::string& id, pipeline::JobStage s) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.result) return;
    it->second.state =
        s == pipeline::JobStage::kBuilt ? JobView::State::kQueued : JobView::State::kRunning;
  }

  void Finish(const std::string& id, const Verdict& v) {
    std::lock_guard<std::mutex> g(mu_);
    --in_flight_;
    CountVerdict(v, &stats_);
    Remember(id, JobResult{v, "embedded", 1});
    done_cv_.notify_all();
  }

  LocalEngineOptions opt_;
  const int lanes_;
  eval::Evaluator* ev_;  // owned by pipeline_'s stages; Lookup is thread-safe
  std::mutex mu_;
  std::condition_variable done_cv_;     // a job finished
  std::map<std::string, Entry> jobs_;   // guarded by mu_
  long long in_flight_ = 0;             // guarded by mu_
  EngineStats stats_;                   // guarded by mu_
  pipeline::Pipeline pipeline_;         // last: its threads call back into the members above
};

}  // namespace

Result<std::unique_ptr<Engine>> MakeLocalEngine(const LocalEngineOptions& opt) {
  auto ev = eval::Evaluator::Create(opt.eval);
  if (!ev.ok()) return ev.status();
  return std::unique_ptr<Engine>(new LocalEngine(opt, std::move(ev.value())));
}

}  // namespace kf::queue
