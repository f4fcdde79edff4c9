#include "queue/worker.h"

#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace kf::queue {
namespace {
using Clock = std::chrono::steady_clock;

// What the heartbeat thread needs to know about the job in hand.
struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  std::string entry;   // guarded by mu; empty when idle
  long long done = 0;  // guarded by mu
  bool quit = false;   // guarded by mu
};

void HeartbeatLoop(const WorkerOptions& opt, const std::string& name, Shared* sh,
                   std::ostream& log) {
  auto period = std::max(std::chrono::milliseconds(50),
                         std::min(std::chrono::milliseconds(5'000), opt.reclaim_idle / 4));
  std::unique_ptr<Redis> redis;
  std::unique_lock<std::mutex> lk(sh->mu);
  while (!sh->quit) {
    std::string entry = sh->entry;
    long long done = sh->done;
    lk.unlock();
    if (!redis) {
      auto r = Redis::Connect(opt.redis_url, std::chrono::milliseconds(5'000));
      if (r.ok()) redis = std::move(r.value());
    }
    if (redis) {
      RedisJobs jobs(redis.get(), opt.prefix);
      Status s = jobs.Heartbeat(name, opt.role, done);
      if (s.ok() && !entry.empty()) s = jobs.Touch(opt.role, name, entry);
      if (!s.ok()) redis.reset();
    }
    lk.lock();
    sh->cv.wait_for(lk, period, [&] { return sh->quit; });
  }
  lk.unlock();
  if (redis) (void)RedisJobs(redis.get(), opt.prefix).Goodbye(name);
  (void)log;
}

std::string Short(const std::string& id) { return id.substr(0, 12); }

// One delivery, start to end. Returns a failed Status only for Redis failures (the caller
// reconnects; the entry stays pending and is reclaimed).
Status Handle(const WorkerOptions& opt, const std::string& name, RedisJobs& jobs,
              eval::Evaluator* ev, const Delivery& d, Shared* sh, std::ostream& log) {
  auto job = jobs.LoadJob(d.job_id);
  if (!job.ok()) return job.status();
  if (!job->has_value()) {
    log << "worker " << name << ": job " << Short(d.job_id) << " has no spec; dropped\n";
    return jobs.Ack(opt.role, d.entry_id);
  }
  const JobSpec& spec = **job;
  auto publish = [&](const Verdict& v) -> Status {
    JobResult r{v, name, static_cast<int>(d.deliveries)};
    auto won = jobs.Publish(spec.id, r);
    if (!won.ok()) return won.status();
    log << "worker " << name << ": job " << Short(spec.id) << " " << StatusName(v.status)
        << (*won ? " (verdict written)" : " (verdict already there)") << std::endl;
    return jobs.Ack(opt.role, d.entry_id);
  };
  auto existing = jobs.GetResult(spec.id);
  if (!existing.ok()) return existing.status();
  if (existing->has_value()) return jobs.Ack(opt.role, d.entry_id);

  if (d.deliveries > opt.max_deliveries) {
    auto last = jobs.LastError(spec.id);
    std::string why = "the job was handed to workers " + std::to_string(d.deliveries - 1) +
                      " times without a verdict (each worker died, hung or failed)";
    if (last.ok() && !last->empty()) why += "; last error: " + *last;
    return publish(InfraResult(spec, why, name, static_cast<int>(d.deliveries)).verdict);
  }
  {
    std::lock_guard<std::mutex> g(sh->mu);
    sh->entry = d.entry_id;
  }
  log << "worker " << name << ": job " << Short(spec.id) << " " << spec.problem_id
      << (d.reclaimed ? " (reclaimed, delivery " + std::to_string(d.deliveries) + ")" : "")
      << std::endl;
  auto path =
      MaterializeProblem(opt.cache_dir, spec.problem_id, spec.problem_hash, spec.problem_text);
  Verdict v;
  bool forward = false;
  bool publish_now = false;  // an infra error no other worker of this kind would fix
  if (!opt.backend.empty() && spec.backend != opt.backend) {
    v = InfraResult(spec,
                    "the job is for the " + spec.backend + " backend; worker " + name + " runs " +
                        opt.backend,
                    name, 1)
            .verdict;
    publish_now = true;
  } else if (!opt.settings.empty() && spec.settings != opt.settings) {
    v = InfraResult(spec,
                    "the job was queued with other evaluation settings than worker " + name +
                        " has (its flags: trials, tolerances, timing, policy... must match "
                        "kforge serve's)",
                    name, 1)
            .verdict;
    publish_now = true;
  } else if (!path.ok()) {
    v = InfraResult(spec, path.status().message(), name, 1).verdict;
  } else if (auto stored = ev->Lookup(*path, spec.candidate)) {
    v = *stored;  // evaluated before by a process sharing this cache
  } else {
    eval::Prepared p = ev->Prepare(*path, spec.candidate, spec.problem_trusted);
    if (opt.role == Role::kBuild && !p.final) {
      forward = true;
    } else {
      v = ev->Execute(std::move(p), 0);
    }
  }
  Status s;
  if (forward) {
    s = jobs.Forward(d.entry_id, spec.id);
    if (s.ok()) log << "worker " << name << ": job " << Short(spec.id) << " built, to gpu\n";
  } else if (v.status == VerdictStatus::kInfraError && !publish_now) {
    // Not the candidate's fault: leave the entry pending so another worker tries again after
    // reclaim_idle; the delivery limit ends it.
    std::string msg = v.diagnostics.empty() ? "infra_error" : v.diagnostics.back().message;
    log << "worker " << name << ": job " << Short(spec.id) << " infra_error: " << msg << "\n";
    s = jobs.NoteError(spec.id, msg);
  } else {
    s = publish(v);
  }
  std::lock_guard<std::mutex> g(sh->mu);
  sh->entry.clear();
  sh->done += 1;
  return s;
}

}  // namespace

std::string DefaultWorkerName(Role role) {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return std::string(host) + "-" + std::to_string(getpid()) + "-" + RoleName(role);
}

Status RunWorker(const WorkerOptions& opt, eval::Evaluator* ev, const std::atomic<bool>& stop,
                 std::ostream& log) {
  const std::string name = opt.name.empty() ? DefaultWorkerName(opt.role) : opt.name;
  const auto timeout = opt.block + std::chrono::milliseconds(10'000);
  auto redis = Redis::Connect(opt.redis_url, timeout);
  if (!redis.ok()) return redis.status();
  {
    RedisJobs jobs(redis->get(), opt.prefix);
    if (auto s = jobs.EnsureGroups(); !s.ok()) return s;
  }
  Shared sh;
  std::thread hb(HeartbeatLoop, std::cref(opt), name, &sh, std::ref(log));
  log << "worker " << name << ": " << RoleName(opt.role) << " role, waiting for jobs" << std::endl;
  int handled = 0;
  while (!stop.load() && (opt.max_jobs == 0 || handled < opt.max_jobs)) {
    RedisJobs jobs(redis->get(), opt.prefix);
    auto d = jobs.Next(opt.role, name, opt.reclaim_idle, opt.block);
    Status s = d.ok() ? Status::Ok() : d.status();
    if (s.ok() && d->has_value()) {
      s = Handle(opt, name, jobs, ev, **d, &sh, log);
      ++handled;
    }
    if (!s.ok()) {
      log << "worker " << name << ": " << s.message() << "; reconnecting" << std::endl;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (auto rs = (*redis)->Reconnect(); rs.ok()) (void)jobs.EnsureGroups();
    }
  }
  {
    std::lock_guard<std::mutex> g(sh.mu);
    sh.quit = true;
  }
  sh.cv.notify_all();
  hb.join();
  return Status::Ok();
}

}  // namespace kf::queue
