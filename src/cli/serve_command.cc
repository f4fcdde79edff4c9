// kforge serve: the reward service (HTTP, docs/API.md), in-process or over Redis Streams.
#ifdef KFORGE_HAVE_NET

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/http_flags.h"
#include "queue/engine.h"
#include "serve/replay.h"
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
  serve::BdrOptions bdr;
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
  queue::RedisAddress redis_addr;
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
    redis_addr = *addr;
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
  // One store for the web UI (the file the embedded engine writes and bench runs were recorded
  // in, with the same --cache) and, without --redis, BDR's buffer. With --redis the service
  // needs no store, and runs on without pages when it cannot be opened.
  std::shared_ptr<store::Store> store;
  if (auto st = store::Store::Open(eo.cache_dir / "kforge.db"); st.ok()) {
    store = std::move(st.value());
  } else if (f.redis.url.empty()) {
    std::cerr << "kforge serve: " << st.status().message() << "\n";
    return kExitInfra;
  } else {
    std::cerr << "kforge serve: warning: no web UI: " << st.status().message() << "\n";
  }
  // BDR's buffer lives beside the jobs: in Redis for --redis (shared by the servers of one
  // --prefix), else in the store.
  std::unique_ptr<serve::ReplayStorage> replay = f.redis.url.empty()
                                                     ? serve::MakeSqliteReplay(store)
                                                     : serve::MakeRedisReplay(redis_addr, f.prefix);
  serve::Bdr bdr(f.bdr, std::move(replay));
  const auto& stop = StopOnSignals();
  Status s = serve::RunServer(
      f.serve, engine->get(), &registry, store.get(), stop,
      [&](int port) {
        std::cout << "kforge serve: listening on http://" << f.serve.host << ":" << port << " ("
                  << (*engine)->Name() << " engine" << where << ", " << eo.backend << " backend, "
                  << registry.size() << " problems, "
                  << (f.serve.token.empty() ? "no token" : "bearer token required") << ")"
                  << (store ? "; web UI at /" : "") << std::endl;
      },
      &bdr);
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
            app->add_option("--bdr-size", f->bdr.capacity,
                            "groups whose samples all failed kept for replay (BDR; "
                            "GET /v1/bdr/sample); the oldest go first beyond; 0: off (1024)")
                ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
            app->add_option("--bdr-replay-prob", f->bdr.replay_prob,
                            "probability that a slot of GET /v1/bdr/sample is a replay (0.25)")
                ->check(CLI::Range(0.0, 1.0));
            app->add_option("--bdr-seed", f->bdr.seed,
                            "seed of BDR's slot draws, for reproducible runs (default: random)");
            app->add_option("--prime-echo-alpha", f->serve.prime_echo.alpha,
                            "PrimeEcho's weight of the first turn, R = a*s_first + (1-a)*max_t "
                            "s_t + bonus (POST /v1/trajectory-reward; 0.75)")
                ->check(CLI::Range(0.0, 1.0));
            app->add_option("--prime-echo-bonus-turn1", f->serve.prime_echo.bonus_turn1,
                            "PrimeEcho's bonus for passing at turn 1 (0.2)")
                ->check(CLI::Range(0.0, 1e6));
            app->add_option("--prime-echo-bonus-turn2", f->serve.prime_echo.bonus_turn2,
                            "PrimeEcho's bonus for passing at turn 2 (0.1)")
                ->check(CLI::Range(0.0, 1e6));
            AddEvalFlags(app, &f->engine, Lanes::kMany);
            return [f] { return RunServe(*f); };
          }};
}

}  // namespace kf::cli

#endif  // KFORGE_HAVE_NET
