// server: the reward service's HTTP front (docs/API.md) over a job engine. cpp-httplib stays
// inside server.cc and front.cc.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "common/status.h"
#include "queue/engine.h"
#include "serve/api.h"
#include "serve/problems.h"
#include "serve/replay.h"
#include "store/store.h"

namespace kf::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port (printed when listening)
  std::string backend = "cpu";
  std::string settings;  // eval::SettingsDigest of the evaluation flags: in job ids
  // Clients send "Authorization: Bearer <token>" on every route but /healthz; empty: no
  // authentication, which RunServer allows only on a loopback host.
  std::string token;
  size_t max_body_bytes = 16 << 20;  // 16 MiB: a batch of large candidates; more is 413
  // Requests handled at once (each holds a thread while it reads its body, runs and waits: a
  // synchronous reward or a long poll for minutes); beyond, 503 with Retry-After at once.
  int threads = 1024;
  int health_threads = 16;             // /healthz and /metrics at once, apart from `threads`
  double request_timeout_s = 30;       // a request's head and body arrive within this, or 408
  double idle_timeout_s = 10;          // a connection without a request begun is closed
  long long max_connections = 10'000;  // open connections; beyond, 503 (fd limit permitting)
  int max_wait_s = 600;                // longest ?wait= honoured
  int reward_timeout_s = 900;          // synchronous reward requests wait this long at most
  double missing_reward = 0.0;         // the OpenRLHF/slime reward when there is none (infra)
  int retry_after_s = 5;               // told to clients on 503
  ApiLimits limits;
  // PrimeEcho's defaults for POST /v1/trajectory-reward (a request may set its own).
  score::PrimeEchoOptions prime_echo;
};

// kInvalidArgument when the options would expose the service without a token (a host that is
// not loopback) or carry a token too weak to use; the message says what to do.
Status CheckExposure(const ServeOptions& opt);

// Serves until `stop` becomes true. `on_listening` is called with the bound port. Refuses
// to start where CheckExposure fails. With a `store`, the web UI (web/site.h) is served at /
// and /ui/...; without an `engine` (`kforge ui`) only the UI (read-only), /healthz and
// /metrics are, and `problems` may be null. `bdr` (borrowed; null: no BDR) keeps the
// all-failed groups of POST /v1/groups for GET /v1/bdr/sample.
Status RunServer(const ServeOptions& opt, queue::Engine* engine, const ProblemRegistry* problems,
                 store::Store* store, const std::atomic<bool>& stop,
                 const std::function<void(int)>& on_listening, Bdr* bdr = nullptr);

}  // namespace kf::serve
