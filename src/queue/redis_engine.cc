// The engine behind `kforge serve --redis`: jobs go to Redis Streams, `kforge worker`
// processes run them, results come back through the results hash. Waiters share one poller
// that looks up every waited-for id in one HMGET per period.
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "queue/engine.h"
#include "queue/redis_jobs.h"

namespace kf::queue {
namespace {

constexpr std::chrono::milliseconds kCommandTimeout{5'000};

class RedisEngine : public Engine {
 public:
  explicit RedisEngine(RedisEngineOptions opt) : opt_(std::move(opt)) {
    poller_ = std::thread([this] { PollLoop(); });
  }

  ~RedisEngine() override {
    {
      std::lock_guard<std::mutex> g(wait_mu_);
      quit_ = true;
    }
    wait_cv_.notify_all();
    poller_.join();
  }

  const char* Name() const override { return "redis"; }

  // Checks Redis is there and the streams exist.
  Status Start() {
    auto lease = Acquire();
    if (!lease.ok()) return lease.status();
    RedisJobs jobs(lease->get(), opt_.prefix);
    Status s = jobs.EnsureGroups();
    bool healthy = (*lease)->healthy();
    Release(std::move(lease.value()), healthy);
    return s;
  }

  Result<JobView> Submit(const JobSpec& job) override {
    return WithJobs([&](RedisJobs& jobs) -> Result<JobView> {
      auto r = jobs.GetResult(job.id);
      if (!r.ok()) return r.status();
      if (r->has_value()) {
        if ((*r)->verdict.status != VerdictStatus::kInfraError) return Done(std::move(**r));
        if (auto s = jobs.Forget(job.id); !s.ok()) return s;  // infra errors run again
      }
      auto known = jobs.Known(job.id);
      if (!known.ok()) return known.status();
      if (!*known) {
        auto st = jobs.Stats(opt_.worker_alive);
        if (!st.ok()) return st.status();
        if (st->in_flight >= opt_.max_in_flight) {
          return Status::Unavailable("the evaluation queues are full (" +
                                     std::to_string(st->in_flight) + " jobs in flight)");
        }
        auto added = jobs.Enqueue(job);
        if (!added.ok()) return added.status();
      }
      JobView v;
      v.state = JobView::State::kPending;
      return v;
    });
  }

  Result<JobView> Get(const std::string& id) override {
    return WithJobs([&](RedisJobs& jobs) -> Result<JobView> {
      auto r = jobs.GetResult(id);
      if (!r.ok()) return r.status();
      if (r->has_value()) return Done(std::move(**r));
      auto known = jobs.Known(id);
      if (!known.ok()) return known.status();
      JobView v;
      v.state = *known ? JobView::State::kPending : JobView::State::kUnknown;
      return v;
    });
  }

  Result<JobView> Wait(const std::string& id, std::chrono::milliseconds timeout) override {
    auto first = Get(id);
    if (!first.ok() || first->state != JobView::State::kPending || timeout.count() <= 0) {
      return first;
    }
    std::unique_lock<std::mutex> lk(wait_mu_);
    waiting_[id] += 1;
    wait_cv_.notify_all();  // wake the poller
    wait_cv_.wait_for(lk, timeout, [&] { return quit_ || arrived_.count(id) > 0; });
    JobView v = *first;
    if (auto it = arrived_.find(id); it != arrived_.end()) v = Done(it->second);
    if (--waiting_[id] == 0) {
      waiting_.erase(id);
      arrived_.erase(id);
    }
    return v;
  }

  Result<EngineStats> Stats() override {
    return WithJobs([&](RedisJobs& jobs) -> Result<EngineStats> {
      auto s = jobs.Stats(opt_.worker_alive);
      if (s.ok()) s->capacity = opt_.max_in_flight;
      return s;
    });
  }

 private:
  static JobView Done(JobResult r) {
    JobView v;
    v.state = JobView::State::kDone;
    v.result = std::move(r);
    return v;
  }

  Result<std::unique_ptr<Redis>> Acquire() {
    {
      std::lock_guard<std::mutex> g(pool_mu_);
      if (!pool_.empty()) {
        auto r = std::move(pool_.back());
        pool_.pop_back();
        return r;
      }
    }
    return Redis::Connect(opt_.url, kCommandTimeout);
  }

  void Release(std::unique_ptr<Redis> r, bool healthy) {
    if (!healthy) return;  // a broken connection is dropped, a fresh one made next time
    std::lock_guard<std::mutex> g(pool_mu_);
    if (static_cast<int>(pool_.size()) < opt_.connections) pool_.push_back(std::move(r));
  }

  template <class F>
  auto WithJobs(F&& f) -> decltype(f(std::declval<RedisJobs&>())) {
    auto lease = Acquire();
    if (!lease.ok()) return lease.status();
    RedisJobs jobs(lease->get(), opt_.prefix);
    auto out = f(jobs);
    bool healthy = (*lease)->healthy();
    Release(std::move(lease.value()), healthy);
    return out;
  }

  void PollLoop() {
    std::unique_ptr<Redis> redis;
    std::unique_lock<std::mutex> lk(wait_mu_);
    while (!quit_) {
      std::vector<std::string> ids;
      for (const auto& [id, n] : waiting_) {
        if (arrived_.count(id) == 0) ids.push_back(id);
      }
      if (ids.empty()) {
        wait_cv_.wait_for(lk, std::chrono::milliseconds(500));
        continue;
      }
      lk.unlock();
      if (!redis) {
        auto r = Redis::Connect(opt_.url, kCommandTimeout);
        if (r.ok()) redis = std::move(r.value());
      }
      Result<std::vector<std::optional<JobResult>>> found = Status::Unavailable("no Redis");
      if (redis) found = RedisJobs(redis.get(), opt_.prefix).GetResults(ids);
      if (!found.ok()) redis.reset();
      lk.lock();
      if (found.ok()) {
        bool any = false;
        for (size_t i = 0; i < ids.size() && i < found->size(); ++i) {
          if ((*found)[i] && waiting_.count(ids[i])) {
            arrived_[ids[i]] = std::move(*(*found)[i]);
            any = true;
          }
        }
        if (any) wait_cv_.notify_all();
      }
      wait_cv_.wait_for(lk, opt_.poll, [&] { return quit_; });
    }
  }

  RedisEngineOptions opt_;
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<Redis>> pool_;  // guarded by pool_mu_
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  std::map<std::string, int> waiting_;        // guarded by wait_mu_: id -> waiters
  std::map<std::string, JobResult> arrived_;  // guarded by wait_mu_
  bool quit_ = false;                         // guarded by wait_mu_
  std::thread poller_;
};

}  // namespace

Result<std::unique_ptr<Engine>> MakeRedisEngine(const RedisEngineOptions& opt) {
  auto e = std::make_unique<RedisEngine>(opt);
  if (auto s = e->Start(); !s.ok()) return s;
  return std::unique_ptr<Engine>(std::move(e));
}

}  // namespace kf::queue
