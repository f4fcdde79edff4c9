// engine: where the reward service sends jobs. One interface, two implementations: in-process
// (threads, bounded queues, the SQLite store; `kforge serve` alone) and Redis Streams
// (`kforge serve --redis` with `kforge worker` processes on any number of machines).
//
// Thread-safety: every method may be called from any number of threads at once.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "common/status.h"
#include "eval/eval.h"
#include "queue/job.h"

namespace kf::queue {

class Engine {
 public:
  virtual ~Engine() = default;
  // Starts the job unless it is known (pending or done: nothing is evaluated twice). A stored
  // infra_error result is forgotten and the job runs again. kUnavailable when the queues hold
  // `max_in_flight` jobs already: the caller answers 503 and the client retries later.
  virtual Result<JobView> Submit(const JobSpec& job) = 0;
  virtual Result<JobView> Get(const std::string& id) = 0;
  // Get, waiting up to `timeout` for the job to finish.
  virtual Result<JobView> Wait(const std::string& id, std::chrono::milliseconds timeout) = 0;
  virtual Result<EngineStats> Stats() = 0;
  virtual const char* Name() const = 0;  // "embedded" or "redis"
};

struct LocalEngineOptions {
  eval::EvalOptions eval;          // cache_dir holds the store, artifacts and inline problems
  long long max_in_flight = 4096;  // queued plus running jobs before Submit says kUnavailable
};
// The in-process engine: eval.build_workers threads run Prepare, one thread per lane runs
// Execute. Jobs in flight are lost when the process ends (clients resubmit; the ids are the
// same and stored verdicts are reused).
Result<std::unique_ptr<Engine>> MakeLocalEngine(const LocalEngineOptions& opt);

struct RedisEngineOptions {
  std::string url = "redis://127.0.0.1:6379";
  std::string prefix = "kf";
  long long max_in_flight = 10'000;    // build plus gpu stream entries before kUnavailable
  int connections = 8;                 // pooled connections for request threads
  std::chrono::milliseconds poll{20};  // how often waited-for results are looked up
  std::chrono::milliseconds worker_alive{15'000};  // a worker is counted if seen this recently
};
Result<std::unique_ptr<Engine>> MakeRedisEngine(const RedisEngineOptions& opt);

}  // namespace kf::queue
