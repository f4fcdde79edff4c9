// worker: the loop of `kforge worker --role build|gpu`. A build worker runs the CPU stages
// (extract, static legality, build into the artifact cache) and either publishes a final
// verdict or forwards the job to the gpu stream; a gpu worker prepares again (an artifact-cache
// hit when the cache folder is shared, a rebuild otherwise) and executes on its lane.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <string>

#include "common/status.h"
#include "eval/eval.h"
#include "queue/redis_jobs.h"

namespace kf::queue {

struct WorkerOptions {
  Role role = Role::kGpu;
  RedisAddress redis;  // ParseRedisUrl; the password may come from the environment
  std::string prefix = "kf";
  std::string name;                 // consumer name; default host-pid-role
  std::filesystem::path cache_dir;  // problems sent with jobs are written here
  std::string backend;  // the evaluator's; a job for another backend ends as infra_error
  // eval::SettingsDigest of the evaluator's options; a job queued under other settings ends as
  // infra_error (its verdict would not be the one the service was asked for).
  std::string settings;
  // An entry idle this long is taken back from its worker, presumed dead. The running worker
  // touches its entry every reclaim_idle / 4, so only a dead or frozen one loses it.
  std::chrono::milliseconds reclaim_idle{60'000};
  // After this many deliveries without a verdict a job ends as infra_error.
  int max_deliveries = 3;
  std::chrono::milliseconds block{1'000};  // one XREADGROUP wait; bounds the reaction to stop
  // While Redis cannot be reached: the first wait before reconnecting, doubled each attempt up
  // to the cap. Logged once when Redis goes and once when it is back.
  std::chrono::milliseconds retry_first{100};
  std::chrono::milliseconds retry_cap{5'000};
  int max_jobs = 0;  // stop after this many (0: never); for tests
};

std::string DefaultWorkerName(Role role);

// Runs until `stop` is set (checked between jobs, every `block` and while waiting to
// reconnect). The evaluator is borrowed; the gpu role executes on its lane 0. Returns an error
// only if Redis cannot be reached at start; later connection failures are retried with
// backoff, and a verdict that could not be written is written once Redis is back. Streams
// that vanished (Redis lost its data) are created again.
Status RunWorker(const WorkerOptions& opt, eval::Evaluator* ev, const std::atomic<bool>& stop,
                 std::ostream& log);

}  // namespace kf::queue
