// worker: the loop of `kforge worker --role build|gpu`. Jobs taken from the role's Redis
// stream are evaluated through kf::pipeline::Pipeline, the one engine (store lookup, prepare,
// execute, store; bounded queues, warm lanes, the retry of timings the machine's load
// spoiled), several at once. A build worker's pipeline is build-only: it runs the CPU stages
// (extract, static legality, build into the artifact cache) and either publishes a final
// verdict or forwards the job to the gpu stream; a gpu worker prepares again (an artifact-cache
// hit when the cache folder is shared, a rebuild otherwise) and executes on its lanes.
//
// One thread owns the Redis connection: it takes entries, refuses the jobs it must not run
// (worker_plan.h), submits the others and settles what the pipeline finished (publish,
// forward, or leave pending). A heartbeat thread with a connection of its own keeps the held
// entries from being reclaimed.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include "common/status.h"
#include "pipeline/pipeline.h"
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
  // touches the entries it holds every reclaim_idle / 4, so only a dead or frozen one loses them.
  std::chrono::milliseconds reclaim_idle{60'000};
  // After this many deliveries without a verdict a job ends as infra_error.
  int max_deliveries = 3;
  std::chrono::milliseconds block{1'000};  // one XREADGROUP wait; bounds the reaction to stop
  // While Redis cannot be reached: the first wait before reconnecting, doubled each attempt up
  // to the cap. Logged once when Redis goes and once when it is back.
  std::chrono::milliseconds retry_first{100};
  std::chrono::milliseconds retry_cap{5'000};
  int max_jobs = 0;       // take this many, finish them and stop (0: never); for tests
  int build_threads = 2;  // the pipeline's (EvalOptions::build_workers)
  // Jobs held at once; 0: InHandLimit's default (worker_plan.h).
  int in_hand = 0;
  // While jobs are held and there is room for more, the stream is looked at this often without
  // blocking, so a finished job's verdict is written at once; an idle worker blocks in
  // XREADGROUP instead (`block`), and so is handed new entries before a busy one.
  std::chrono::milliseconds poll_busy{200};
};

std::string DefaultWorkerName(Role role);

// Runs until `stop` is set (checked every `block` or `poll_busy`, and while waiting to
// reconnect); then the jobs running on a build thread or a lane are finished and settled, and
// the held ones not yet started are handed back to the stream for other workers. `stages` are
// the evaluator's (pipeline::EvaluatorStages; no lanes for the build role). Returns an error
// only if Redis cannot be reached at start; later connection failures are retried with
// backoff, and verdicts that could not be written are written once Redis is back. Streams
// that vanished (Redis lost its data) are created again.
Status RunWorker(const WorkerOptions& opt, std::unique_ptr<pipeline::Stages> stages,
                 const std::atomic<bool>& stop, std::ostream& log);

}  // namespace kf::queue
