// The in-process engine behind `kforge serve` without --redis.
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "queue/engine.h"

namespace kf::queue {
namespace {

// Done jobs are remembered in memory up to this many (all but infra errors are in the store).
constexpr size_t kMaxRemembered = 200'000;

class LocalEngine : public Engine {
 public:
  LocalEngine(LocalEngineOptions opt, std::unique_ptr<eval::Evaluator> ev)
      : opt_(std::move(opt)), ev_(std::move(ev)) {
    int builders = std::max(1, opt_.eval.build_workers);
    for (int i = 0; i < builders; ++i) threads_.emplace_back([this] { BuildLoop(); });
    for (int i = 0; i < ev_->lanes(); ++i) threads_.emplace_back([this, i] { ExecLoop(i); });
  }

  ~LocalEngine() override {
    {
      std::lock_guard<std::mutex> g(mu_);
      quit_ = true;
    }
    work_cv_.notify_all();
    done_cv_.notify_all();
    for (auto& t : threads_) t.join();
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
    // environment too (eval::VerdictKey), so only a verdict made exactly so comes back.
    std::optional<Verdict> stored;
    auto path =
        MaterializeProblem(opt_.eval.cache_dir, job.problem_id, job.problem_hash, job.problem_text);
    if (path.ok()) stored = ev_->Lookup(*path, job.candidate);
    std::lock_guard<std::mutex> g(mu_);
    if (auto v = ViewLocked(job.id); v.state != JobView::State::kUnknown) return v;
    if (stored) {
      Remember(job.id, JobResult{*stored, "store", 0});
      return ViewLocked(job.id);
    }
    if (in_flight_ >= opt_.max_in_flight) {
      return Status::Unavailable("the evaluation queue is full (" + std::to_string(in_flight_) +
                                 " jobs in flight)");
    }
    jobs_[job.id] = Entry{JobView::State::kQueued, std::nullopt};
    ++in_flight_;
    build_q_.push_back(job);
    work_cv_.notify_all();
    return ViewLocked(job.id);
  }

  // Jobs of this process only: a job id names no store entry (the store's key also covers the
  // environment), so after a restart a client submits again and gets the stored verdict.
  Result<JobView> Get(const std::string& id) override {
    std::lock_guard<std::mutex> g(mu_);
    return ViewLocked(id);
  }

  Result<JobView> Wait(const std::string& id, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lk(mu_);
    if (jobs_.count(id) == 0) {
      lk.unlock();
      return Get(id);
    }
    done_cv_.wait_for(lk, timeout, [&] {
      auto it = jobs_.find(id);
      return quit_ || it == jobs_.end() || it->second.result.has_value();
    });
    return ViewLocked(id);
  }

  Result<EngineStats> Stats() override {
    std::lock_guard<std::mutex> g(mu_);
    EngineStats s = stats_;
    s.queue_depth["build"] = static_cast<long long>(build_q_.size()) + building_;
    s.queue_depth["gpu"] = static_cast<long long>(exec_q_.size()) + executing_;
    s.workers["build"] = std::max(1, opt_.eval.build_workers);
    s.workers["gpu"] = ev_->lanes();
    s.in_flight = in_flight_;
    s.capacity = opt_.max_in_flight;
    return s;
  }

 private:
  struct Entry {
    JobView::State state = JobView::State::kQueued;  // kQueued, kRunning or kDone
    std::optional<JobResult> result;                 // kDone
  };

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

  // A stage took the job (kRunning) or handed it to the next queue (kQueued).
  void SetStateLocked(const std::string& id, JobView::State s) {
    if (auto it = jobs_.find(id); it != jobs_.end() && !it->second.result) it->second.state = s;
  }

  void Finish(const std::string& id, const Verdict& v) {
    std::lock_guard<std::mutex> g(mu_);
    --in_flight_;
    CountVerdict(v, &stats_);
    Remember(id, JobResult{v, "embedded", 1});
    done_cv_.notify_all();
  }

  void BuildLoop() {
    for (;;) {
      JobSpec job;
      {
        std::unique_lock<std::mutex> lk(mu_);
        work_cv_.wait(lk, [&] { return quit_ || !build_q_.empty(); });
        if (quit_) return;
        job = std::move(build_q_.front());
        build_q_.pop_front();
        ++building_;
        SetStateLocked(job.id, JobView::State::kRunning);
      }
      auto path = MaterializeProblem(opt_.eval.cache_dir, job.problem_id, job.problem_hash,
                                     job.problem_text);
      std::optional<Verdict> final_verdict;
      std::optional<eval::Prepared> prepared;
      if (!path.ok()) {
        final_verdict = InfraResult(job, path.status().message(), "embedded", 1).verdict;
      } else {
        eval::Prepared p = ev_->Prepare(*path, job.candidate, job.problem_trusted);
        if (p.final)
          final_verdict = ev_->Execute(std::move(p), 0);  // scores, no lane used
        else
          prepared = std::move(p);
      }
      {
        std::lock_guard<std::mutex> g(mu_);
        --building_;
        if (prepared) {
          SetStateLocked(job.id, JobView::State::kQueued);  // built; waits for a lane
          exec_q_.emplace_back(job.id, std::move(*prepared));
          work_cv_.notify_all();
        }
      }
      if (final_verdict) Finish(job.id, *final_verdict);
    }
  }

  void ExecLoop(int lane) {
    for (;;) {
      std::pair<std::string, eval::Prepared> item;
      {
        std::unique_lock<std::mutex> lk(mu_);
        work_cv_.wait(lk, [&] { return quit_ || !exec_q_.empty(); });
        if (quit_) return;
        item = std::move(exec_q_.front());
        exec_q_.pop_front();
        ++executing_;
        SetStateLocked(item.first, JobView::State::kRunning);
      }
      Verdict v = ev_->Execute(std::move(item.second), lane);
      {
        std::lock_guard<std::mutex> g(mu_);
        --executing_;
      }
      Finish(item.first, v);
    }
  }

  LocalEngineOptions opt_;
  std::unique_ptr<eval::Evaluator> ev_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // build_q_ or exec_q_ gained an item, or quit_
  std::condition_variable done_cv_;  // a job finished
  std::deque<JobSpec> build_q_;      // guarded by mu_
  std::deque<std::pair<std::string, eval::Prepared>> exec_q_;  // guarded by mu_
  std::map<std::string, Entry> jobs_;                          // guarded by mu_
  long long in_flight_ = 0, building_ = 0, executing_ = 0;     // guarded by mu_
  EngineStats stats_;                                          // guarded by mu_
  bool quit_ = false;                                          // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace

Result<std::unique_ptr<Engine>> MakeLocalEngine(const LocalEngineOptions& opt) {
  auto ev = eval::Evaluator::Create(opt.eval);
  if (!ev.ok()) return ev.status();
  return std::unique_ptr<Engine>(new LocalEngine(opt, std::move(ev.value())));
}

}  // namespace kf::queue
