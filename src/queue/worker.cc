#include "queue/worker.h"

#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "queue/backoff.h"
#include "queue/worker_plan.h"

namespace kf::queue {
namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string Short(const std::string& id) { return id.substr(0, 12); }

// A job the pipeline is done with, for the loop to settle in Redis.
struct Finished {
  std::string entry_id;
  Verdict verdict;
  pipeline::Outcome how = pipeline::Outcome::kEvaluated;
};

// A verdict Redis did not take when it was made: written as soon as Redis is back.
struct Unwritten {
  std::string job_id, entry_id;
  JobResult result;
};

// What the loop shares with the heartbeat thread and the pipeline's threads.
struct Shared {
  std::mutex mu;
  std::condition_variable finished_cv;   // a job finished
  std::condition_variable heartbeat_cv;  // quit
  std::set<std::string> entries;         // guarded by mu: held entries, kept alive by heartbeats
  std::deque<Finished> finished;         // guarded by mu
  long long done = 0;                    // guarded by mu
  bool quit = false;                     // guarded by mu
};

// Tells Redis every reclaim_idle / 4 that the worker lives and still works on its entries; on a
// connection of its own, so a long XREADGROUP or a Redis outage of the loop does not delay it.
void HeartbeatLoop(const WorkerOptions& opt, const std::string& name, Shared* sh) {
  auto period = std::max(milliseconds(50), std::min(milliseconds(5'000), opt.reclaim_idle / 4));
  std::unique_ptr<Redis> redis;
  std::unique_lock<std::mutex> lk(sh->mu);
  while (!sh->quit) {
    std::vector<std::string> entries(sh->entries.begin(), sh->entries.end());
    long long done = sh->done;
    lk.unlock();
    if (!redis) {
      auto r = Redis::Connect(opt.redis, milliseconds(5'000));
      if (r.ok()) redis = std::move(r.value());
    }
    if (redis) {
      RedisJobs jobs(redis.get(), opt.prefix);
      Status s = jobs.Heartbeat(name, opt.role, done);
      for (size_t i = 0; s.ok() && i < entries.size(); ++i) {
        s = jobs.Touch(opt.role, name, entries[i]);
      }
      if (!s.ok()) redis.reset();
    }
    lk.lock();
    sh->heartbeat_cv.wait_for(lk, period, [&] { return sh->quit; });
  }
  lk.unlock();
  if (redis) (void)RedisJobs(redis.get(), opt.prefix).Goodbye(name);
}

class Worker {
 public:
  Worker(const WorkerOptions& opt, std::unique_ptr<pipeline::Stages> stages,
         const std::atomic<bool>& stop, std::ostream& log)
      : opt_(opt),
        name_(opt.name.empty() ? DefaultWorkerName(opt.role) : opt.name),
        who_("worker " + name_),
        stop_(stop),
        log_(log),
        stages_(std::move(stages)) {}

  Status Run();

 private:
  // A job taken from the stream and not yet settled.
  struct Held {
    std::string job_id;
    long long deliveries = 1;
  };

  // Takes one delivery: refuses it (published or left pending at once) or hands it to the
  // pipeline. A failed Status is Redis's (the entry stays pending and is reclaimed).
  Status Take(const Delivery& d);
  // Settles the jobs the pipeline finished. Stops at a lost connection, keeping the rest.
  Status SettleFinished();
  Status Settle(const Finished& f);
  // Writes a verdict and acknowledges its entry; kept in unwritten_ when Redis fails.
  Status Publish(Unwritten u);
  Status WriteUnwritten();
  // An infrastructure failure: noted for the delivery-limit verdict, the entry left pending
  // for another worker.
  Status LeavePending(const std::string& job_id, const std::string& message);
  void Hold(const std::string& entry_id, Held h);
  void Drop(const std::string& entry_id);
  // Waits up to `ms` for a job to finish.
  void WaitForFinished(milliseconds ms);
  // Sleeps in short slices so a stop request is not kept waiting.
  void Pause(milliseconds ms);
  // Finishes what runs, hands back what does not, settles and says what was left unwritten.
  void Drain();

  const WorkerOptions& opt_;
  const std::string name_, who_;
  const std::atomic<bool>& stop_;
  std::ostream& log_;
  std::unique_ptr<pipeline::Stages> stages_;  // until the pipeline takes them
  std::unique_ptr<Redis> redis_;
  std::optional<RedisJobs> jobs_;
  std::map<std::string, Held> held_;  // by entry id; the loop's thread only
  std::deque<Unwritten> unwritten_;
  Shared shared_;
  // Last: destroyed first, so its threads are gone before what their callbacks touch.
  std::unique_ptr<pipeline::Pipeline> pipeline_;
};

Status Worker::Run() {
  auto redis = Redis::Connect(opt_.redis, opt_.block + milliseconds(10'000));
  if (!redis.ok()) return redis.status();
  redis_ = std::move(redis.value());
  jobs_.emplace(redis_.get(), opt_.prefix);
  if (auto s = jobs_->EnsureGroups(); !s.ok()) return s;
  const int lanes = stages_->lanes();
  const size_t limit = static_cast<size_t>(InHandLimit(opt_, lanes));
  pipeline_ =
      std::make_unique<pipeline::Pipeline>(std::move(stages_), WorkerPipelineOptions(opt_, lanes));
  std::thread heartbeat(HeartbeatLoop, std::cref(opt_), name_, &shared_);
  log_ << who_ << ": " << RoleName(opt_.role) << " role on " << DescribeRedis(opt_.redis)
       << ", waiting for jobs (up to " << limit << " at once)" << std::endl;
  Backoff backoff(opt_.retry_first, opt_.retry_cap);
  RedisOutage outage(&log_, who_, backoff);
  bool streams_gone = false;  // logged once per loss
  int taken = 0;
  while (!stop_.load()) {
    const bool all_taken = opt_.max_jobs > 0 && taken >= opt_.max_jobs;
    if (all_taken && held_.empty()) break;
    if (!redis_->healthy()) {
      Status rs = redis_->Reconnect();
      if (rs.ok()) rs = jobs_->EnsureGroups();
      if (rs.ok()) rs = WriteUnwritten();
      if (!rs.ok()) {
        outage.Failed(rs);
        Pause(backoff.Next());
        continue;
      }
      outage.Ok();
      backoff.Reset();
    }
    Status s = SettleFinished();
    if (s.ok() && !all_taken && held_.size() < limit) {
      // Idle, it waits in XREADGROUP; holding jobs, it only looks, so that their verdicts are
      // written as soon as they are made.
      auto d = jobs_->Next(opt_.role, name_, opt_.reclaim_idle,
                           held_.empty() ? opt_.block : milliseconds(0));
      s = d.ok() ? Status::Ok() : d.status();
      if (s.ok() && d->has_value()) {
        streams_gone = false;
        ++taken;
        s = Take(**d);
        if (s.ok()) continue;  // room for more, perhaps
      }
    }
    if (s.ok()) {
      if (!held_.empty()) WaitForFinished(held_.size() < limit ? opt_.poll_busy : opt_.block);
      continue;
    }
    if (!redis_->healthy()) {
      outage.Failed(s);  // reconnected at the top of the loop
      continue;
    }
    // Redis answered with an error. NOGROUP: the streams are gone with Redis's data (a flush,
    // or a restart the connection survived); make them again.
    if (s.message().find("NOGROUP") != std::string::npos) {
      if (!streams_gone) {
        log_ << who_ << ": the job streams are gone (Redis lost its data?); creating them again"
             << std::endl;
      }
      streams_gone = true;
      if (auto es = jobs_->EnsureGroups(); es.ok()) continue;
    }
    log_ << who_ << ": " << s.message() << std::endl;
    Pause(backoff.Next());
  }
  if (stop_.load()) pipeline_->Cancel();  // what has not started is handed back in Drain
  pipeline_->Close();                     // while the heartbeat still keeps the entries
  {
    std::lock_guard<std::mutex> g(shared_.mu);
    shared_.quit = true;
  }
  shared_.heartbeat_cv.notify_all();
  heartbeat.join();
  Drain();
  return Status::Ok();
}

Status Worker::Take(const Delivery& d) {
  if (held_.count(d.entry_id)) return Status::Ok();  // ours already (a late heartbeat)
  auto job = jobs_->LoadJob(d.job_id);
  if (!job.ok()) return job.status();
  if (!job->has_value()) {
    log_ << who_ << ": job " << Short(d.job_id) << " has no spec; dropped\n";
    return jobs_->Ack(opt_.role, d.entry_id, d.job_id);
  }
  const JobSpec& spec = **job;
  auto existing = jobs_->GetResult(spec.id);
  if (!existing.ok()) return existing.status();
  if (existing->has_value()) return jobs_->Ack(opt_.role, d.entry_id, spec.id);
  const int deliveries = static_cast<int>(d.deliveries);
  if (d.deliveries > opt_.max_deliveries) {
    auto last = jobs_->LastError(spec.id);
    Verdict v = OverDeliveryLimit(spec, d.deliveries, last.ok() ? *last : "", name_);
    return Publish({spec.id, d.entry_id, JobResult{v, name_, deliveries}});
  }
  log_ << who_ << ": job " << Short(spec.id) << " " << spec.problem_id
       << (d.reclaimed ? " (reclaimed, delivery " + std::to_string(d.deliveries) + ")" : "")
       << std::endl;
  if (auto v = Mismatch(opt_, name_, spec)) {  // no worker of this kind would do better
    return Publish({spec.id, d.entry_id, JobResult{*v, name_, deliveries}});
  }
  auto path =
      MaterializeProblem(opt_.cache_dir, spec.problem_id, spec.problem_hash, spec.problem_text);
  if (!path.ok()) return LeavePending(spec.id, path.status().message());
  Hold(d.entry_id, Held{spec.id, d.deliveries});
  const std::string entry = d.entry_id;
  bool accepted = pipeline_->TrySubmit(pipeline::Job{*path, spec.candidate, spec.problem_trusted},
                                       [this, entry](const Verdict& v, pipeline::Outcome how) {
                                         std::lock_guard<std::mutex> g(shared_.mu);
                                         shared_.finished.push_back({entry, v, how});
                                         shared_.finished_cv.notify_all();
                                       });
  if (!accepted) {  // never while running: the intake holds every job the worker may hold
    Drop(entry);
    return jobs_->Release(opt_.role, name_, entry);
  }
  return Status::Ok();
}

Status Worker::SettleFinished() {
  std::deque<Finished> batch;
  {
    std::lock_guard<std::mutex> g(shared_.mu);
    batch.swap(shared_.finished);
  }
  while (!batch.empty()) {
    Finished f = std::move(batch.front());
    batch.pop_front();
    if (Status s = Settle(f); !s.ok()) {
      if (!redis_->healthy()) {  // the rest wait for the connection to be back
        std::lock_guard<std::mutex> g(shared_.mu);
        shared_.finished.insert(shared_.finished.begin(), batch.begin(), batch.end());
        return s;
      }
      log_ << who_ << ": " << s.message() << std::endl;  // this one's entry stays pending
    }
  }
  return Status::Ok();
}

Status Worker::Settle(const Finished& f) {
  auto it = held_.find(f.entry_id);
  if (it == held_.end()) return Status::Ok();
  const Held h = it->second;
  Drop(f.entry_id);
  switch (StepAfter(f.verdict, f.how)) {
    case Step::kForward: {
      Status s = jobs_->Forward(f.entry_id, h.job_id);
      if (s.ok()) log_ << who_ << ": job " << Short(h.job_id) << " built, to gpu\n";
      return s;
    }
    case Step::kLeavePending: {
      const auto& ds = f.verdict.diagnostics;
      return LeavePending(h.job_id, ds.empty() ? "infra_error" : ds.back().message);
    }
    case Step::kRelease:
      log_ << who_ << ": job " << Short(h.job_id) << " not started; handed back\n";
      return jobs_->Release(opt_.role, name_, f.entry_id);
    case Step::kPublish:
      break;
  }
  return Publish(
      {h.job_id, f.entry_id, JobResult{f.verdict, name_, static_cast<int>(h.deliveries)}});
}

Status Worker::Publish(Unwritten u) {
  auto won = jobs_->Publish(u.job_id, u.result);
  Status s = won.ok() ? Status::Ok() : won.status();
  if (s.ok()) {
    log_ << who_ << ": job " << Short(u.job_id) << " " << StatusName(u.result.verdict.status)
         << (*won ? " (verdict written)" : " (verdict already there)") << std::endl;
    s = jobs_->Ack(opt_.role, u.entry_id, u.job_id);
  }
  if (!s.ok()) unwritten_.push_back(std::move(u));  // again later (HSETNX: idempotent)
  return s;
}

Status Worker::WriteUnwritten() {
  std::deque<Unwritten> todo;
  todo.swap(unwritten_);
  while (!todo.empty()) {
    Unwritten u = std::move(todo.front());
    todo.pop_front();
    if (Status s = Publish(std::move(u)); !s.ok()) {
      unwritten_.insert(unwritten_.end(), todo.begin(), todo.end());
      return s;
    }
  }
  return Status::Ok();
}

Status Worker::LeavePending(const std::string& job_id, const std::string& message) {
  log_ << who_ << ": job " << Short(job_id) << " infra_error: " << message << "\n";
  return jobs_->NoteError(job_id, message);
}

void Worker::Hold(const std::string& entry_id, Held h) {
  held_[entry_id] = std::move(h);
  std::lock_guard<std::mutex> g(shared_.mu);
  shared_.entries.insert(entry_id);
}

void Worker::Drop(const std::string& entry_id) {
  held_.erase(entry_id);
  std::lock_guard<std::mutex> g(shared_.mu);
  shared_.entries.erase(entry_id);
  shared_.done += 1;
}

void Worker::WaitForFinished(milliseconds ms) {
  std::unique_lock<std::mutex> lk(shared_.mu);
  shared_.finished_cv.wait_for(lk, ms, [&] { return !shared_.finished.empty(); });
}

void Worker::Pause(milliseconds ms) {
  auto until = Clock::now() + ms;
  while (!stop_.load() && Clock::now() < until) {
    std::this_thread::sleep_for(std::min(
        milliseconds(100), std::chrono::duration_cast<milliseconds>(until - Clock::now())));
  }
}

void Worker::Drain() {
  if (!redis_->healthy()) (void)redis_->Reconnect();
  if (redis_->healthy()) {
    (void)WriteUnwritten();
    (void)SettleFinished();
  }
  size_t left;
  {
    std::lock_guard<std::mutex> g(shared_.mu);
    left = shared_.finished.size();
  }
  left += unwritten_.size();
  if (left > 0) {
    log_ << who_ << ": stopping with " << left
         << " verdict(s) unwritten (Redis unreachable); their jobs run again elsewhere"
         << std::endl;
  }
}

}  // namespace

std::string DefaultWorkerName(Role role) {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return std::string(host) + "-" + std::to_string(getpid()) + "-" + RoleName(role);
}

Status RunWorker(const WorkerOptions& opt, std::unique_ptr<pipeline::Stages> stages,
                 const std::atomic<bool>& stop, std::ostream& log) {
  Worker w(opt, std::move(stages), stop, log);
  return w.Run();
}

}  // namespace kf::queue
