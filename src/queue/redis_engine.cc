// The engine behind `kforge serve --redis`: jobs go to Redis Streams, `kforge worker`
// processes run them, results come back through the results hash. Waiters share one poller
// that looks up every waited-for id in one HMGET per period.
//
// Redis may lose data (a restart without persistence, a flush, a failover to a replica that
// was behind). The server keeps a copy of each job it submitted (Ledger); every `check` period
// the poller reads the epoch key and looks up every job it holds open, and a job Redis no
// longer has is queued again from the copy, or answered lost at once. Get and Submit do the
// same for the job they are asked about, so every route gives the same answer.
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "common/hash.h"
#include "queue/backoff.h"
#include "queue/engine.h"
#include "queue/redis_jobs.h"

namespace kf::queue {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kCommandTimeout{5'000};
constexpr size_t kLookBatch = 500;  // ids per LookMany script run

JobView Queued() {
  JobView v;
  v.state = JobView::State::kQueued;
  return v;
}

std::string NewEpoch() {
  std::random_device rd;
  return Sha256Hex(std::to_string(rd()) + std::to_string(rd()) +
                   std::to_string(Clock::now().time_since_epoch().count()))
      .substr(0, 16);
}

class RedisEngine : public Engine {
 public:
  explicit RedisEngine(RedisEngineOptions opt) : opt_(std::move(opt)), ledger_(opt_.ledger) {}

  ~RedisEngine() override {
    {
      std::lock_guard<std::mutex> g(wait_mu_);
      quit_ = true;
    }
    wait_cv_.notify_all();
    if (poller_.joinable()) poller_.join();
  }

  const char* Name() const override { return "redis"; }

  // Checks Redis is there, creates the streams and reads (or writes) the epoch.
  Status Start() {
    auto st = WithJobs([&](RedisJobs& jobs) -> Result<std::string> {
      if (auto s = jobs.EnsureGroups(); !s.ok()) return s;
      return jobs.ClaimEpoch(NewEpoch());
    });
    if (!st.ok()) return st.status();
    epoch_ = *st;
    poller_ = std::thread([this] { PollLoop(); });
    return Status::Ok();
  }

  Result<JobView> Submit(const JobSpec& job) override {
    return WithJobs([&](RedisJobs& jobs) -> Result<JobView> {
      auto st = jobs.Look(job.id);
      if (!st.ok()) return st.status();
      bool replace = false;
      if (st->seen == Seen::kDone) {
        if (st->view.result->verdict.status != VerdictStatus::kInfraError) {
          (void)ledger_.Reconcile(job.id, Seen::kDone);
          return st->view;
        }
        replace = true;  // infra errors run again
      } else if (st->seen == Seen::kInFlight) {
        ledger_.Hold(job);
        return st->view;
      }
      auto in_flight = jobs.InFlight();
      if (!in_flight.ok()) return in_flight.status();
      if (*in_flight >= opt_.max_in_flight) {
        return Status::Unavailable("the evaluation queues are full (" + std::to_string(*in_flight) +
                                   " jobs in flight)");
      }
      auto added = jobs.Enqueue(job, replace);
      if (!added.ok()) return added.status();
      ledger_.Hold(job);
      return Queued();
    });
  }

  Result<JobView> Get(const std::string& id) override {
    return WithJobs([&](RedisJobs& jobs) -> Result<JobView> {
      auto st = jobs.Look(id);
      if (!st.ok()) return st.status();
      return Resolve(jobs, id, *st);
    });
  }

  Result<JobView> Wait(const std::string& id, std::chrono::milliseconds timeout) override {
    auto first = Get(id);
    if (!first.ok()) {
      // Redis cannot be asked. A job this server holds is not given up: wait for Redis to come
      // back (the poller finds the job, or queues it again).
      if (timeout.count() <= 0 || !ledger_.Knows(id)) return first;
      first = Queued();
    }
    if (Settled(first->state) || first->state == JobView::State::kUnknown || timeout.count() <= 0) {
      return first;
    }
    std::optional<JobView> arrived;
    {
      std::unique_lock<std::mutex> lk(wait_mu_);
      waiting_[id] += 1;
      wait_cv_.notify_all();  // wake the poller
      wait_cv_.wait_for(lk, timeout, [&] { return quit_ || arrived_.count(id) > 0; });
      if (auto it = arrived_.find(id); it != arrived_.end()) arrived = it->second;
      if (--waiting_[id] == 0) {
        waiting_.erase(id);
        arrived_.erase(id);
      }
    }
    if (arrived) return *arrived;
    auto last = Get(id);  // queued or running now?
    return last.ok() && last->state != JobView::State::kUnknown ? last : first;
  }

  Result<EngineStats> Stats() override {
    auto s = WithJobs([&](RedisJobs& jobs) { return jobs.Stats(opt_.worker_alive); });
    if (!s.ok()) return s;
    s->capacity = opt_.max_in_flight;
    std::lock_guard<std::mutex> g(count_mu_);
    s->requeued = requeued_;
    s->lost = lost_;
    s->data_losses = data_losses_;
    return s;
  }

 private:
  static JobView Lost(const JobIdentity& who) {
    JobView v;
    v.state = JobView::State::kLost;
    v.result = InfraResult(who,
                           "the job's record vanished from Redis (Redis lost its data: a restart "
                           "without persistence, a flush or a failover) and this server holds "
                           "no copy of it to queue again; submit it again",
                           "kforge serve", 0);
    return v;
  }

  // The answer for a job, given what Redis holds of it: a job Redis lost is queued again from
  // the ledger's copy, or lost.
  Result<JobView> Resolve(RedisJobs& jobs, const std::string& id, const Stored& st) {
    Decision d = ledger_.Reconcile(id, st.seen);
    switch (d.action) {
      case Decision::Action::kNothing:
        return st.view;
      case Decision::Action::kUnknown:
        return JobView{};
      case Decision::Action::kLost: {
        std::lock_guard<std::mutex> g(count_mu_);
        ++lost_;
        return Lost(d.identity);
      }
      case Decision::Action::kRequeue: {
        auto added = jobs.Enqueue(*d.spec);
        if (!added.ok()) return added.status();
        if (*added) {
          std::lock_guard<std::mutex> g(count_mu_);
          ++requeued_;
        }
        return Queued();
      }
    }
    return st.view;
  }

  // A pooled connection, or a new one when none is pooled or `fresh`.
  Result<std::unique_ptr<Redis>> Acquire(bool fresh, bool* pooled) {
    *pooled = false;
    if (!fresh) {
      std::lock_guard<std::mutex> g(pool_mu_);
      if (!pool_.empty()) {
        auto r = std::move(pool_.back());
        pool_.pop_back();
        *pooled = true;
        return r;
      }
    }
    return Redis::Connect(opt_.redis, kCommandTimeout);
  }

  void Release(std::unique_ptr<Redis> r) {
    if (!r->healthy()) return;  // a broken connection is dropped, a fresh one made next time
    std::lock_guard<std::mutex> g(pool_mu_);
    if (static_cast<int>(pool_.size()) < opt_.connections) pool_.push_back(std::move(r));
  }

  // Runs `f` on a pooled connection. One that broke was likely stale (Redis restarted since it
  // was pooled, and so are the others): the pool is emptied and `f` runs once more on a new
  // connection. Every `f` here is safe to repeat (lookups, SET NX enqueues).
  template <class F>
  auto WithJobs(F&& f) -> decltype(f(std::declval<RedisJobs&>())) {
    for (int attempt = 0;; ++attempt) {
      bool pooled = false;
      auto lease = Acquire(attempt > 0, &pooled);
      if (!lease.ok()) return lease.status();
      RedisJobs jobs(lease->get(), opt_.prefix);
      auto out = f(jobs);
      const bool broken = !(*lease)->healthy();
      Release(std::move(lease.value()));
      if (out.ok() || !broken || !pooled || attempt > 0) return out;
      std::lock_guard<std::mutex> g(pool_mu_);
      pool_.clear();
    }
  }

  void Log(const std::string& line) {
    if (opt_.log) *opt_.log << "kforge serve: " << line << std::endl;
  }

  // The epoch key gone or changed: Redis lost its data. Claims a new one and recreates the
  // streams; the check pass that follows queues the held jobs again.
  Status CheckEpoch(RedisJobs& jobs) {
    auto e = jobs.Epoch();
    if (!e.ok()) return e.status();
    if (*e == epoch_) return Status::Ok();
    auto now = jobs.ClaimEpoch(NewEpoch());
    if (!now.ok()) return now.status();
    if (auto s = jobs.EnsureGroups(); !s.ok()) return s;
    Log(std::string("Redis lost its data (the epoch key ") + (e->empty() ? "is gone" : "changed") +
        ": a restart without persistence, a flush or a failover); the " +
        std::to_string(ledger_.open_count()) +
        " unfinished jobs this server holds are looked up and queued again where missing");
    epoch_ = *now;
    std::lock_guard<std::mutex> g(count_mu_);
    ++data_losses_;
    return Status::Ok();
  }

  // One round of the poller: results of the waited-for ids and, when due, the epoch and every
  // held job. Settled answers for waited-for ids go to `found`.
  Status PollOnce(Redis* redis, const std::vector<std::string>& waited, bool check,
                  std::map<std::string, JobView>* found) {
    RedisJobs jobs(redis, opt_.prefix);
    if (!waited.empty()) {
      auto res = jobs.GetResults(waited);
      if (!res.ok()) return res.status();
      for (size_t i = 0; i < waited.size() && i < res->size(); ++i) {
        if (!(*res)[i]) continue;
        JobView v;
        v.state = JobView::State::kDone;
        v.result = std::move(*(*res)[i]);
        (*found)[waited[i]] = std::move(v);
        (void)ledger_.Reconcile(waited[i], Seen::kDone);
      }
    }
    if (!check) return Status::Ok();
    if (auto s = CheckEpoch(jobs); !s.ok()) return s;
    std::vector<std::string> ids = ledger_.Open();
    for (const auto& id : waited) {
      if (!found->count(id) && !ledger_.Knows(id)) ids.push_back(id);  // another server's job
    }
    long long requeued0, lost0;
    {
      std::lock_guard<std::mutex> g(count_mu_);
      requeued0 = requeued_;
      lost0 = lost_;
    }
    for (size_t at = 0; at < ids.size(); at += kLookBatch) {
      std::vector<std::string> batch(ids.begin() + at,
                                     ids.begin() + std::min(ids.size(), at + kLookBatch));
      auto stored = jobs.LookMany(batch);
      if (!stored.ok()) return stored.status();
      for (size_t i = 0; i < batch.size(); ++i) {
        const Stored& st = (*stored)[i];
        if (st.seen == Seen::kInFlight) continue;
        auto v = Resolve(jobs, batch[i], st);
        if (!v.ok()) return v.status();
        if (v->state != JobView::State::kQueued) (*found)[batch[i]] = std::move(v.value());
      }
    }
    std::lock_guard<std::mutex> g(count_mu_);
    if (requeued_ > requeued0 || lost_ > lost0) {
      Log(std::to_string(requeued_ - requeued0 + lost_ - lost0) +
          " jobs were missing from Redis: " + std::to_string(requeued_ - requeued0) +
          " queued again from this server's copy, " + std::to_string(lost_ - lost0) +
          " answered lost (no copy held)");
    }
    return Status::Ok();
  }

  void PollLoop() {
    std::unique_ptr<Redis> redis;
    Backoff backoff(opt_.poll, opt_.retry_cap);
    RedisOutage outage(opt_.log, "kforge serve", backoff);
    auto next_check = Clock::now() + opt_.check;
    std::unique_lock<std::mutex> lk(wait_mu_);
    while (!quit_) {
      std::vector<std::string> waited;
      for (const auto& [id, n] : waiting_) {
        if (arrived_.count(id) == 0) waited.push_back(id);
      }
      const bool check = Clock::now() >= next_check;
      if (waited.empty() && !check) {
        wait_cv_.wait_until(lk, next_check);
        continue;
      }
      lk.unlock();
      std::map<std::string, JobView> found;
      Status s;
      if (!redis) {
        auto r = Redis::Connect(opt_.redis, kCommandTimeout);
        if (r.ok()) redis = std::move(r.value());
        s = r.status();
      }
      if (redis) s = PollOnce(redis.get(), waited, check, &found);
      if (s.ok()) {
        outage.Ok();
        backoff.Reset();
        if (check) next_check = Clock::now() + opt_.check;
      } else {
        outage.Failed(s);
        redis.reset();
        next_check = Clock::now();  // look at everything as soon as Redis answers again
      }
      lk.lock();
      bool any = false;
      for (auto& [id, v] : found) {
        if (waiting_.count(id)) {
          arrived_[id] = std::move(v);
          any = true;
        }
      }
      if (any) wait_cv_.notify_all();
      wait_cv_.wait_for(lk, s.ok() ? opt_.poll : backoff.Next(), [&] { return quit_; });
    }
  }

  RedisEngineOptions opt_;
  Ledger ledger_;
  std::string epoch_;  // only the poller touches it after Start
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<Redis>> pool_;  // guarded by pool_mu_
  std::mutex count_mu_;
  long long requeued_ = 0, lost_ = 0, data_losses_ = 0;  // guarded by count_mu_
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  std::map<std::string, int> waiting_;      // guarded by wait_mu_: id -> waiters
  std::map<std::string, JobView> arrived_;  // guarded by wait_mu_: settled answers
  bool quit_ = false;                       // guarded by wait_mu_
  std::thread poller_;
};

}  // namespace

Result<std::unique_ptr<Engine>> MakeRedisEngine(const RedisEngineOptions& opt) {
  auto e = std::make_unique<RedisEngine>(opt);
  if (auto s = e->Start(); !s.ok()) return s;
  return std::unique_ptr<Engine>(std::move(e));
}

}  // namespace kf::queue
