// kforge serve: the reward service (HTTP, docs/API.md), in-process or over Redis Streams.
#ifdef KFORGE_HAVE_NET

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "queue/engine.h"
#include "serve/server.h"

namespace kf::cli {
namespace {

struct ServeFlags {
  EvalFlags engine;
  serve::ServeOptions serve;
  RedisFlags redis;
  std::string prefix = "kf";
  std::vector<std::string> problems;
  long long max_in_flight = 0;
};

int RunServe(ServeFlags& f) {
  eval::EvalOptions eo = ToEvalOptions(f.engine);
  f.serve.backend = eo.backend;
  f.serve.settings = eval::SettingsDigest(eo);
  serve::ProblemRegistry registry;
  for (const auto& dir : f.problems) {
    if (auto s = registry.AddFolder(dir); !s.ok()) {
      std::cerr << "kforge serve: " << s.message() << "\n";
      return kExitUsage;
    }
  }
  Result<std::unique_ptr<queue::Engine>> engine = Status::Internal("no engine");
  std::string where;  // the Redis, redacted, for the start-up line
  if (f.redis.url.empty() && !f.redis.password_env.empty()) {
    std::cerr << "kforge serve: --redis-password-env needs --redis\n";
    return kExitUsage;
  }
  if (!f.redis.url.empty()) {
    auto addr = ToRedisAddress(f.redis);
    if (!addr.ok()) {
      std::cerr << "kforge serve: " << addr.status().message() << "\n";
      return kExitUsage;
    }
    where = " at " + queue::DescribeRedis(*addr);
    queue::RedisEngineOptions ro;
    ro.redis = *addr;
    ro.log = &std::cerr;
    ro.prefix = f.prefix;
    if (f.max_in_flight > 0) ro.max_in_flight = f.max_in_flight;
    ro.ledger.max_specs = static_cast<size_t>(ro.max_in_flight);  // a copy of each open job
    engine = queue::MakeRedisEngine(ro);
  } else {
    queue::LocalEngineOptions lo;
    lo.eval = eo;
    if (f.max_in_flight > 0) lo.max_in_flight = f.max_in_flight;
    engine = queue::MakeLocalEngine(lo);
  }
  if (!engine.ok()) {
    std::cerr << "kforge serve: " << engine.status().message() << "\n";
    return kExitInfra;
  }
  const auto& stop = StopOnSignals();
  Status s = serve::RunServer(f.serve, engine->get(), &registry, stop, [&](int port) {
    std::cout << "kforge serve: listening on http://" << f.serve.host << ":" << port << " ("
              << (*engine)->Name() << " engine" << where << ", " << eo.backend << " backend, "
              << registry.size() << " problems)" << std::endl;
  });
  if (!s.ok()) {
    std::cerr << "kforge serve: " << s.message() << "\n";
    return kExitInfra;
  }
  std::cerr << "kforge serve: stopping (jobs in hand are finished first)" << std::endl;
  return kExitOk;
}

}  // namespace

Command ServeCommand() {
  return {"serve", "Serve rewards and verdicts over HTTP (RL trainers: verl, OpenRLHF, slime)",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<ServeFlags>();
            app->add_option("--port", f->serve.port, "TCP port (0: any free port)")
                ->check(CLI::Range(0, 65535));
            app->add_option("--host", f->serve.host, "address to listen on (127.0.0.1)");
            app->add_option("--redis", f->redis.url,
                            "Redis URL, redis://[user[:password]@]host[:port][/db] or rediss:// "
                            "(TLS): jobs go to `kforge worker` processes through Redis Streams "
                            "(default: evaluate in this process)");
            AddRedisPasswordFlag(app, &f->redis);
            app->add_option("--prefix", f->prefix, "prefix of the Redis keys (one per service)");
            app->add_option("--problems", f->problems,
                            "folder of KernelBench-format problems, registered by relative path "
                            "(repeatable)");
            app->add_option("--max-in-flight", f->max_in_flight,
                            "jobs queued or running before new ones get 503 (embedded 4096, "
                            "redis 10000)");
            app->add_option("--threads", f->serve.threads, "HTTP request threads (64)")
                ->check(CLI::Range(1, 4096));
            app->add_option("--max-body-bytes", f->serve.max_body_bytes,
                            "larger request bodies get 413 (16 MiB)");
            app->add_option("--reward-timeout-s", f->serve.reward_timeout_s,
                            "longest wait of a synchronous reward request (900)");
            app->add_option("--max-wait-s", f->serve.max_wait_s, "longest ?wait= honoured (600)");
            app->add_option("--missing-reward", f->serve.missing_reward,
                            "OpenRLHF/slime reward when a job has none: infra_error or not "
                            "finished in time (0)");
            AddEngineFlags(app, &f->engine);
            return [f] { return RunServe(*f); };
          }};
}

}  // namespace kf::cli

#endif  // KFORGE_HAVE_NET
