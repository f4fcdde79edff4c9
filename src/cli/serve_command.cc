// kforge serve: the reward service (HTTP, docs/API.md), in-process or over Redis Streams.
#ifdef KFORGE_HAVE_NET

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/engine_flags.h"
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

// The token comes from the environment (never argv, which every user of the machine can read
// in /proc) and is removed from it at once, so the runner processes kforge starts, candidates
// among them, do not inherit it.
int ReadToken(ServeFlags& f) {
  if (f.token_env.empty()) return kExitOk;
  const char* v = std::getenv(f.token_env.c_str());
  if (v == nullptr || *v == '\0') {
    std::cerr << "kforge serve: --token-env " << f.token_env
              << ": the environment variable is unset or empty\n";
    return kExitUsage;
  }
  f.serve.token = v;
  ::unsetenv(f.token_env.c_str());
  return kExitOk;
}

int RunServe(ServeFlags& f) {
  if (int rc = ReadToken(f); rc != kExitOk) return rc;
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
  // BDR's buffer lives beside the jobs: in Redis for --redis (shared by the servers of one
  // --prefix), else in the store under --cache (the same file the evaluator uses).
  std::unique_ptr<serve::ReplayStorage> replay;
  if (!f.redis.url.empty()) {
    replay = serve::MakeRedisReplay(redis_addr, f.prefix);
  } else {
    auto st = store::Store::Open(eo.cache_dir / "kforge.db");
    if (!st.ok()) {
      std::cerr << "kforge serve: " << st.status().message() << "\n";
      return kExitInfra;
    }
    replay = serve::MakeSqliteReplay(std::shared_ptr<store::Store>(std::move(st.value())));
  }
  serve::Bdr bdr(f.bdr, std::move(replay));
  const auto& stop = StopOnSignals();
  Status s = serve::RunServer(
      f.serve, engine->get(), &registry, stop,
      [&](int port) {
        std::cout << "kforge serve: listening on http://" << f.serve.host << ":" << port << " ("
                  << (*engine)->Name() << " engine" << where << ", " << eo.backend << " backend, "
                  << registry.size() << " problems, "
                  << (f.serve.token.empty() ? "no token" : "bearer token required") << ")"
                  << std::endl;
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
            app->add_flag("--allow-inline-problems", f->allow_inline_problems,
                          "accept problems sent as text (problem_source, labels holding a "
                          "problem's source); each runs only in a confined judge of its own. "
                          "Default: only the --problems registered at start-up");
            app->add_option("--max-in-flight", f->max_in_flight,
                            "jobs queued or running before new ones get 503 (embedded 4096, "
                            "redis 10000)");
            app->add_option("--token-env", f->token_env,
                            "environment variable holding the bearer token clients must send "
                            "(Authorization: Bearer <token>); required unless --host is loopback")
                ->check([](const std::string& n) {
                  return n.empty() || n.find_first_of("= ") != std::string::npos
                             ? std::string("a variable name, e.g. KFORGE_TOKEN")
                             : std::string();
                });
            app->add_option("--threads", f->serve.threads,
                            "requests handled at once; a synchronous reward or long poll holds "
                            "one while it waits; beyond, 503 (1024)")
                ->check(CLI::Range(1, 16384));
            app->add_option("--health-threads", f->serve.health_threads,
                            "/healthz and /metrics requests handled at once, apart from "
                            "--threads (16)")
                ->check(CLI::Range(1, 1024));
            app->add_option("--request-timeout-s", f->serve.request_timeout_s,
                            "a request's head and body must arrive within this many seconds of "
                            "its first byte, or 408 (30)")
                ->check(CLI::Range(0.1, 3600.0));
            app->add_option("--idle-timeout-s", f->serve.idle_timeout_s,
                            "a connection with no request begun is closed after this (10)")
                ->check(CLI::Range(0.1, 3600.0));
            app->add_option("--max-connections", f->serve.max_connections,
                            "open connections; a new one beyond gets 503 (10000, at most the "
                            "descriptor limit less 512)")
                ->check(CLI::Range(16LL, 1LL << 20));
            app->add_option("--max-body-bytes", f->serve.max_body_bytes,
                            "larger request bodies get 413 (16 MiB)");
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
