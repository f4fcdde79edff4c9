// kforge worker: one build or GPU worker of the distributed reward service (Redis Streams).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "eval/eval.h"
#include "pipeline/pipeline.h"
#include "queue/worker.h"

namespace kf::cli {
namespace {

struct WorkerFlags {
  EvalFlags engine;
  std::string role;
  RedisFlags redis{"redis://127.0.0.1:6379", ""};
  std::string prefix = "kf";
  std::string name;
  int reclaim_idle_ms = 60'000;
  int max_deliveries = 3;
  int max_jobs = 0;
};

int RunWorkerCommand(const WorkerFlags& f) {
  queue::WorkerOptions wo;
  if (!queue::RoleFromName(f.role, &wo.role)) {
    std::cerr << "kforge worker: --role must be build or gpu\n";
    return kExitUsage;
  }
  eval::EvalOptions eo = ToEvalOptions(f.engine);
  // A build worker compiles only: no lane (no PyTorch process, no CUDA context), no helper.
  eo.lanes = wo.role == queue::Role::kGpu;
  auto addr = ToRedisAddress(f.redis);
  if (!addr.ok()) {
    std::cerr << "kforge worker: " << addr.status().message() << "\n";
    return kExitUsage;
  }
  wo.redis = *addr;
  wo.prefix = f.prefix;
  wo.name = f.name;
  wo.cache_dir = eo.cache_dir;
  wo.backend = eo.backend;
  wo.settings = eval::SettingsDigest(eo);
  wo.reclaim_idle = std::chrono::milliseconds(f.reclaim_idle_ms);
  wo.max_deliveries = f.max_deliveries;
  wo.max_jobs = f.max_jobs;
  wo.build_threads = eo.build_workers;
  auto ev = eval::Evaluator::Create(eo);
  if (!ev.ok()) {
    std::cerr << "kforge worker: " << ev.status().message() << "\n";
    return kExitInfra;
  }
  const auto& stop = StopOnSignals();
  Status s =
      queue::RunWorker(wo, pipeline::EvaluatorStages(std::move(ev.value())), stop, std::cerr);
  if (!s.ok()) {
    std::cerr << "kforge worker: " << s.message() << "\n";
    return kExitInfra;
  }
  return kExitOk;
}

}  // namespace

Command WorkerCommand() {
  return {"worker", "Run build or GPU jobs of `kforge serve --redis` (Redis Streams)",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<WorkerFlags>();
            app->add_option("--role", f->role,
                            "build (extract, legality, compile) or gpu "
                            "(execute on this machine's lanes)")
                ->required()
                ->check(CLI::IsMember({"build", "gpu"}));
            app->add_option("--redis", f->redis.url,
                            "Redis URL: redis://[user[:password]@]host[:port][/db], rediss:// "
                            "for TLS (?ca=FILE&cert=FILE&key=FILE&server_name=NAME&verify=none)");
            AddRedisPasswordFlag(app, &f->redis);
            app->add_option("--prefix", f->prefix, "prefix of the Redis keys (one per service)");
            app->add_option("--name", f->name, "consumer name (default: host-pid-role)");
            app->add_option("--reclaim-idle-ms", f->reclaim_idle_ms,
                            "take back jobs whose worker has been silent this long (60000)")
                ->check(CLI::Range(100, 86'400'000));
            app->add_option("--max-deliveries", f->max_deliveries,
                            "after this many deliveries without a verdict a job is infra_error")
                ->check(CLI::Range(1, 100));
            app->add_option("--max-jobs", f->max_jobs, "exit after this many jobs (0: never)");
            AddEvalFlags(app, &f->engine, Lanes::kMany);
            return [f] { return RunWorkerCommand(*f); };
          }};
}

}  // namespace kf::cli
