// kforge serve: the reward service (HTTP, docs/API.md), in-process or over Redis Streams.
#ifdef KFORGE_HAVE_NET

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/http_flags.h"
#include "queue/engine.h"
#include "serve/server.h"
#include "store/store.h"

namespace kf::cli {
namespace {

struct ServeFlags {
  EvalFlags engine;
  serve::ServeOptions serve;
  RedisFlags redis;
  std::string prefix = "kf";
  std::vector<std::string> problems;
  long long max_in_flight = 0;
  bool allow_inline_problems = false;
  std::string token_env;
};

int RunServe(ServeFlags& f) {
  if (int rc = ReadTokenEnv("serve", f.token_env, &f.serve.token); rc != kExitOk) return rc;
  if (auto s = serve::CheckExposure(f.serve); !s.ok()) {  // before any runner process starts
    std::cerr << "kforge serve: " << s.message() << "\n";
    return kExitUsage;
  }
  eval::EvalOptions eo = ToEvalOptions(f.engine);
  f.serve.backend = eo.backend;
  f.serve.settings = eval::SettingsDigest(eo);
  serve::ProblemRegistry registry;
  registry.AllowInline(f.allow_inline_problems);
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
  // The web UI reads the same store the embedded engine writes (and bench runs were recorded
  // in, with the same --cache); without it the service runs on, without pages.
  auto store = store::Store::Open(eo.cache_dir / "kforge.db");
  if (!store.ok()) {
    std::cerr << "kforge serve: warning: no web UI: " << store.status().message() << "\n";
  }
  const auto& stop = StopOnSignals();
  Status s = serve::RunServer(
      f.serve, engine->get(), &registry, store.ok() ? store->get() : nullptr, stop, [&](int port) {
        std::cout << "kforge serve: listening on http://" << f.serve.host << ":" << port << " ("
                  << (*engine)->Name() << " engine" << where << ", " << eo.backend << " backend, "
                  << registry.size() << " problems, "
                  << (f.serve.token.empty() ? "no token" : "bearer token required") << ")"
                  << (store.ok() ? "; web UI at /" : "") << std::endl;
      });
  if (!s.ok()) {
    std::cerr << "kforge serve: " << s.message() << "\n";
    return s.code() == Code::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  std::cerr << "kforge serve: stopping (jobs in hand are finished first)" << std::endl;
  return kExitOk;
}

}  // namespace

Command ServeCommand() {
  return {"serve", "Serve rewards and verdicts over HTTP (RL trainers: verl, OpenRLHF, slime)",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<ServeFlags>();
            AddHttpFlags(app, &f->serve, &f->token_env);
            app->add_option("--redis", f->redis.url,
                            "Redis URL, redis://[user[:password]@]host[:port][/db] or rediss:// "
                            "(TLS): jobs go to `kforge worker` processes through Redis Streams "
                            "(default: evaluate in this process)");
            AddRedisPasswordFlag(app, &f->redis);
            app->add_option("--prefix", f->prefix, "prefix of the Redis keys (one per service)");
            app->add_option("--problems", f->problems,
                            "folder of KernelBench-format problems, registered by relative path "
                            "(repeatable)");
            app->add_flag("--allow-inline-problems", f->allow_inline_problems,
                          "accept problems sent as text (problem_source, labels holding a "
                          "problem's source); each runs only in a confined judge of its own. "
                          "Default: only the --problems registered at start-up");
            app->add_option("--max-in-flight", f->max_in_flight,
                            "jobs queued or running before new ones get 503 (embedded 4096, "
                            "redis 10000)");
            app->add_option("--reward-timeout-s", f->serve.reward_timeout_s,
                            "longest wait of a synchronous reward request (900)");
            app->add_option("--max-wait-s", f->serve.max_wait_s, "longest ?wait= honoured (600)");
            app->add_option("--missing-reward", f->serve.missing_reward,
                            "OpenRLHF/slime reward when a job has none: infra_error or not "
                            "finished in time (0)");
            AddEvalFlags(app, &f->engine, Lanes::kMany);
            return [f] { return RunServe(*f); };
          }};
}

}  // namespace kf::cli

#endif  // KFORGE_HAVE_NET
