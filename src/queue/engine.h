// engine: where the reward service sends jobs. One interface, two implementations: in-process
// (threads, bounded queues, the SQLite store; `kforge serve` alone) and Redis Streams
// (`kforge serve --redis` with `kforge worker` processes on any number of machines).
//
// Thread-safety: every method may be called from any number of threads at once.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include "common/status.h"
#include "eval/eval.h"
#include "queue/job.h"
#include "queue/ledger.h"
#include "queue/redis_url.h"

namespace kf::queue {

class Engine {
 public:
  virtual ~Engine() = default;
  // Starts the job unless it is known (queued, running or done: nothing is evaluated twice). A
  // stored infra_error result is forgotten and the job runs again, and so is a lost job.
  // kUnavailable when the queues hold `max_in_flight` jobs already: the caller answers 503 and
  // the client retries later.
  virtual Result<JobView> Submit(const JobSpec& job) = 0;
  // kUnknown: no such job (404). Never kUnknown for a job this engine still holds.
  virtual Result<JobView> Get(const std::string& id) = 0;
  // Get, waiting up to `timeout` for the job to settle (done or lost). Returns at once for a
  // lost or unknown job; while Redis cannot be reached it waits for it to come back (a job
  // this server holds is not given up) and at the timeout answers the last state seen.
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
  RedisAddress redis;  // ParseRedisUrl; the password may come from the environment
  std::string prefix = "kf";
  long long max_in_flight = 10'000;    // build plus gpu stream entries before kUnavailable
  int connections = 8;                 // pooled connections for request threads
  std::chrono::milliseconds poll{20};  // how often waited-for results are looked up
  // How often every job this server holds open is looked up in Redis (and the epoch key read):
  // a job lost with Redis's data is queued again (or answered lost) within about this long of
  // Redis coming back.
  std::chrono::milliseconds check{500};
  std::chrono::milliseconds worker_alive{15'000};  // a worker is counted if seen this recently
  std::chrono::milliseconds retry_cap{1'000};      // longest wait between reconnects
  LedgerOptions ledger;         // how many jobs this server keeps copies of (see ledger.h)
  std::ostream* log = nullptr;  // Redis going down, coming back, losing its data
};
Result<std::unique_ptr<Engine>> MakeRedisEngine(const RedisEngineOptions& opt);

}  // namespace kf::queue
