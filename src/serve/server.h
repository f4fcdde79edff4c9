// server: the reward service's HTTP front (docs/API.md) over a job engine. cpp-httplib stays
// inside server.cc.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "common/status.h"
#include "queue/engine.h"
#include "serve/api.h"
#include "serve/problems.h"

namespace kf::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                   // 0: any free port (printed when listening)
  std::string backend = "cpu";
  std::string settings;              // eval::SettingsDigest of the evaluation flags: in job ids
  size_t max_body_bytes = 16 << 20;  // 16 MiB: a batch of large candidates; more is 413
  int threads = 64;                  // request threads; long polls hold one each
  int max_wait_s = 600;              // longest ?wait= honoured
  int reward_timeout_s = 900;        // synchronous reward requests wait this long at most
  double missing_reward = 0.0;       // the OpenRLHF/slime reward when there is none (infra)
  int retry_after_s = 5;             // told to clients on 503
  ApiLimits limits;
};

// Serves until `stop` becomes true. `on_listening` is called with the bound port.
Status RunServer(const ServeOptions& opt, queue::Engine* engine, const ProblemRegistry* problems,
                 const std::atomic<bool>& stop, const std::function<void(int)>& on_listening);

}  // namespace kf::serve
