#include "queue/worker.h"

#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "queue/backoff.h"

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
      auto r = Redis::Connect(opt.redis, std::chrono::milliseconds(5'000));
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

// A verdict made while Redis could not take it: written as soon as Redis is back.
struct Unwritten {
  std::string job_id, entry_id;
  JobResult result;
};

// Writes a verdict and acknowledges its entry.
Status Publish(const WorkerOptions& opt, const std::string& name, RedisJobs& jobs,
               const Unwritten& u, std::ostream& log) {
  auto won = jobs.Publish(u.job_id, u.result);
  if (!won.ok()) return won.status();
  log << "worker " << name << ": job " << Short(u.job_id) << " "
      << StatusName(u.result.verdict.status)
      << (*won ? " (verdict written)" : " (verdict already there)") << std::endl;
  return jobs.Ack(opt.role, u.entry_id, u.job_id);
}

// One delivery, start to end. Returns a failed Status only for Redis failures (the caller
// reconnects; the entry stays pending and is reclaimed). A verdict Redis did not take is left
// in `unwritten`.
Status Handle(const WorkerOptions& opt, const std::string& name, RedisJobs& jobs,
              eval::Evaluator* ev, const Delivery& d, Shared* sh,
              std::optional<Unwritten>* unwritten, std::ostream& log) {
  auto job = jobs.LoadJob(d.job_id);
  if (!job.ok()) return job.status();
  if (!job->has_value()) {
    log << "worker " << name << ": job " << Short(d.job_id) << " has no spec; dropped\n";
    return jobs.Ack(opt.role, d.entry_id, d.job_id);
  }
  const JobSpec& spec = **job;
  auto publish = [&](const Verdict& v) -> Status {
    Unwritten u{spec.id, d.entry_id, JobResult{v, name, static_cast<int>(d.deliveries)}};
    Status s = Publish(opt, name, jobs, u, log);
    if (!s.ok()) *unwritten = std::move(u);  // written again later (HSETNX: idempotent)
    return s;
  };
  auto existing = jobs.GetResult(spec.id);
  if (!existing.ok()) return existing.status();
  if (existing->has_value()) return jobs.Ack(opt.role, d.entry_id, spec.id);

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
  const std::string who = "worker " + name;
  const auto timeout = opt.block + std::chrono::milliseconds(10'000);
  auto redis = Redis::Connect(opt.redis, timeout);
  if (!redis.ok()) return redis.status();
  RedisJobs jobs(redis->get(), opt.prefix);
  if (auto s = jobs.EnsureGroups(); !s.ok()) return s;
  Shared sh;
  std::thread hb(HeartbeatLoop, std::cref(opt), name, &sh, std::ref(log));
  log << who << ": " << RoleName(opt.role) << " role on " << DescribeRedis(opt.redis)
      << ", waiting for jobs" << std::endl;
  Backoff backoff(opt.retry_first, opt.retry_cap);
  RedisOutage outage(&log, who, backoff);
  std::optional<Unwritten> unwritten;
  bool streams_gone = false;  // logged once per loss
  // Sleeps in short slices so a stop request is not kept waiting.
  auto pause = [&](std::chrono::milliseconds ms) {
    auto until = Clock::now() + ms;
    while (!stop.load() && Clock::now() < until) {
      std::this_thread::sleep_for(
          std::min(std::chrono::milliseconds(100),
                   std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now())));
    }
  };
  int handled = 0;
  while (!stop.load() && (opt.max_jobs == 0 || handled < opt.max_jobs)) {
    if (!(*redis)->healthy()) {
      Status rs = (*redis)->Reconnect();
      if (rs.ok()) rs = jobs.EnsureGroups();
      if (rs.ok() && unwritten) rs = Publish(opt, name, jobs, *unwritten, log);
      if (!rs.ok()) {
        outage.Failed(rs);
        pause(backoff.Next());
        continue;
      }
      unwritten.reset();
      outage.Ok();
      backoff.Reset();
    }
    auto d = jobs.Next(opt.role, name, opt.reclaim_idle, opt.block);
    Status s = d.ok() ? Status::Ok() : d.status();
    if (s.ok() && d->has_value()) {
      streams_gone = false;
      s = Handle(opt, name, jobs, ev, **d, &sh, &unwritten, log);
      ++handled;
    }
    if (s.ok()) continue;
    if (!(*redis)->healthy()) {
      outage.Failed(s);  // reconnected at the top of the loop
      continue;
    }
    // Redis answered with an error. NOGROUP: the streams are gone with Redis's data (a flush,
    // or a restart the connection survived); make them again.
    if (s.message().find("NOGROUP") != std::string::npos) {
      if (!streams_gone) {
        log << who << ": the job streams are gone (Redis lost its data?); creating them again"
            << std::endl;
      }
      streams_gone = true;
      if (auto es = jobs.EnsureGroups(); es.ok()) continue;
    }
    log << who << ": " << s.message() << std::endl;
    pause(backoff.Next());
  }
  if (unwritten) {
    log << who << ": stopping with the verdict of job " << Short(unwritten->job_id)
        << " unwritten (Redis unreachable); the job runs again elsewhere" << std::endl;
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
