// redis_jobs: the job queue on Redis Streams, shared by `kforge serve --redis` and the
// `kforge worker` processes on any number of machines.
//
// Keys (prefix "kf" by default):
//   <p>:job:<id>       the job's JSON (SET NX: the claim that makes a job enqueued only once)
//   <p>:stream:build   stream of job ids waiting for a build worker (group "build")
//   <p>:stream:gpu     stream of job ids that built and wait for a GPU worker (group "gpu")
//   <p>:entries        hash: job id -> "<role> <stream entry id>" of the job's current entry
//                      (so a job's state, queued or running, comes from the group's pending list)
//   <p>:results        hash: job id -> result JSON (HSETNX: the first verdict written wins)
//   <p>:epoch          a random value the first server writes (SET NX); a server that finds it
//                      gone or changed knows Redis lost its data
//   <p>:stats          hash: verdicts by status, stage time sums and counts
//   <p>:errors         hash: job id -> the last infra error of an attempt that gave up
//   <p>:workers        hash: worker name -> {"role", "seen_ms", "jobs"} (heartbeats)
// A stream entry is acknowledged and deleted when its job moves on, so a stream's length is
// what waits or runs in that stage. A worker that dies leaves its entry pending; after
// reclaim_idle another worker takes it with XAUTOCLAIM. The running worker keeps its entry's
// idle time low by re-claiming it (XCLAIM JUSTID) while it works, so a slow job is not stolen.
// After max_deliveries the job ends as infra_error.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "queue/job.h"
#include "queue/ledger.h"
#include "queue/redis.h"

namespace kf::queue {

enum class Role { kBuild, kGpu };
const char* RoleName(Role r);
bool RoleFromName(const std::string& s, Role* r);

// One entry handed to a worker.
struct Delivery {
  std::string entry_id;  // the stream entry
  std::string job_id;
  long long deliveries = 1;  // including this one
  bool reclaimed = false;    // taken back from another (dead or stuck) worker
};

// Parses the entries of an XREADGROUP or XAUTOCLAIM reply ([[entry_id, [field, value, ...]]...]).
std::vector<Delivery> ParseEntries(const Reply& entries);
// The delivery count in an XPENDING (extended form) reply for one entry; 0 if absent.
long long ParseDeliveryCount(const Reply& pending);

// What Redis holds of one job: done (with its result), in flight (queued or running) or
// missing (no result and no job record).
struct Stored {
  Seen seen = Seen::kMissing;
  JobView view;  // kDone: state kDone and the result; kInFlight: kQueued or kRunning
};
// Decodes a reply of the state script ({"done", json} | {"running", consumer} | {"queued"} |
// {"missing"}).
Result<Stored> ParseStored(const Reply& r);

class RedisJobs {
 public:
  // Borrows `redis` (one connection, one thread at a time).
  RedisJobs(Redis* redis, std::string prefix);

  std::string StreamKey(Role r) const { return prefix_ + ":stream:" + RoleName(r); }
  std::string JobKey(const std::string& id) const { return prefix_ + ":job:" + id; }
  std::string ResultsKey() const { return prefix_ + ":results"; }
  std::string StatsKey() const { return prefix_ + ":stats"; }
  std::string WorkersKey() const { return prefix_ + ":workers"; }
  std::string ErrorsKey() const { return prefix_ + ":errors"; }
  std::string EntriesKey() const { return prefix_ + ":entries"; }
  std::string EpochKey() const { return prefix_ + ":epoch"; }

  // Creates the streams and groups if missing (idempotent).
  Status EnsureGroups();

  // Server side. Enqueue stores the job and adds it to the build stream, atomically, unless
  // the job is known already; returns true when this call enqueued it. With replace_infra a
  // stored infra_error result (and the job's old record) is removed first, in the same step,
  // so the job runs again.
  Result<bool> Enqueue(const JobSpec& job, bool replace_infra = false);
  Result<std::optional<JobResult>> GetResult(const std::string& id);
  // Results for several ids in one round trip (nullopt where none yet).
  Result<std::vector<std::optional<JobResult>>> GetResults(const std::vector<std::string>& ids);
  // One job's state, from one script run (atomic).
  Result<Stored> Look(const std::string& id);
  // Several jobs in one round trip: done (with result), in flight (view state kQueued; queued
  // and running are not told apart here) or missing.
  Result<std::vector<Stored>> LookMany(const std::vector<std::string>& ids);
  // The epoch key's value ("" when there is none).
  Result<std::string> Epoch();
  // Writes `fresh` as the epoch unless one is there; returns the one that is.
  Result<std::string> ClaimEpoch(const std::string& fresh);
  Result<EngineStats> Stats(std::chrono::milliseconds worker_alive);
  // Entries in the build and gpu streams: the jobs queued or running.
  Result<long long> InFlight();

  // Worker side. Next first takes back entries idle longer than reclaim_idle (XAUTOCLAIM), then
  // waits up to block for a new one (XREADGROUP; block 0: does not wait). nullopt: nothing to do.
  Result<std::optional<Delivery>> Next(Role role, const std::string& consumer,
                                       std::chrono::milliseconds reclaim_idle,
                                       std::chrono::milliseconds block);
  Result<std::optional<JobSpec>> LoadJob(const std::string& id);
  // Writes the result unless one is there (HSETNX); true when this call wrote it. Counts it
  // in the stats when it did.
  Result<bool> Publish(const std::string& id, const JobResult& r);
  // Acknowledges and deletes the entry (and forgets it as the job's current one).
  Status Ack(Role role, const std::string& entry_id, const std::string& job_id);
  // Moves a built job to the gpu stream and acknowledges its build entry, in one script.
  Status Forward(const std::string& entry_id, const std::string& job_id);
  // Resets the entry's idle time: the worker holding it is alive.
  Status Touch(Role role, const std::string& consumer, const std::string& entry_id);
  // Hands an entry its worker will not run back to the group: it stays pending, but looks idle
  // for days, so the next Next of any worker takes it back (XCLAIM IDLE, which counts no
  // delivery; the taking does).
  Status Release(Role role, const std::string& consumer, const std::string& entry_id);
  // The last infrastructure failure of a job's attempts, kept for the delivery-limit verdict.
  Status NoteError(const std::string& id, const std::string& message);
  Result<std::string> LastError(const std::string& id);
  Status Heartbeat(const std::string& worker, Role role, long long jobs_done);
  Status Goodbye(const std::string& worker);

 private:
  Redis* redis_;
  std::string prefix_;
};

}  // namespace kf::queue
