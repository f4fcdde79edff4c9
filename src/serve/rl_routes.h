// rl_routes: the reward service's routes for RL training loops beyond one reward per sample:
// POST /v1/groups (GRPO groups and their statistics, feeding BDR), POST /v1/trajectory-reward
// (PrimeEcho over a multi-turn trajectory), GET /v1/bdr/sample and GET /v1/bdr (docs/API.md).
// They run on whatever evaluates (the Evaluations the server hands in), so they hold no HTTP
// and can be tested with a fake.
//
// Thread-safety: RlRoutes may be called from any number of threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "queue/job.h"
#include "score/score.h"
#include "serve/api.h"
#include "serve/replay.h"

namespace kf::serve {

using Clock = std::chrono::steady_clock;

// What the routes need from the service (server.cc implements it over the job engine).
class Evaluations {
 public:
  virtual ~Evaluations() = default;
  // Makes every item a job first (an unknown problem, or a problem's text the service refuses,
  // fails the call before anything runs), submits them all, then waits for all until
  // `deadline`: the time of the slowest, not the sum. Views in the items' order; the job ids
  // in *ids.
  virtual Result<std::vector<queue::JobView>> Run(const std::vector<ItemRequest>& items,
                                                  Clock::time_point deadline,
                                                  std::vector<std::string>* ids) = 0;
  // Like Run, but one bad sample fails one sample (docs/API.md): an item with a fault, or whose
  // job cannot be made (an unknown problem, a problem's text the service refuses: its fault is
  // set then), is answered without an evaluation (Unevaluated) and its id is "". An error only
  // when every item is refused, before anything runs.
  virtual Result<std::vector<queue::JobView>> RunEach(std::vector<ItemRequest>* items,
                                                      Clock::time_point deadline,
                                                      std::vector<std::string>* ids) = 0;
  // An evaluation submitted before, waited for until `deadline` (a past deadline: as it is now).
  // kNotFound for an id the service does not know.
  virtual Result<queue::JobView> Await(const std::string& id, Clock::time_point deadline) = 0;
};

inline constexpr int64_t kMaxReplaySample = 4096;  // GET /v1/bdr/sample?n= at most

class RlRoutes {
 public:
  // Borrows all three; `bdr` may be null (no BDR: groups are never recorded, /v1/bdr is 404).
  RlRoutes(const ApiLimits& limits, const score::PrimeEchoOptions& prime_echo, Evaluations* ev,
           Bdr* bdr);

  Result<nlohmann::json> Groups(const nlohmann::json& body, Clock::time_point deadline);
  Result<nlohmann::json> TrajectoryReward(const nlohmann::json& body, Clock::time_point deadline);
  // The query's n and p as sent (nullopt when absent).
  Result<nlohmann::json> BdrSample(const std::optional<std::string>& n,
                                   const std::optional<std::string>& p);
  Result<nlohmann::json> BdrStatus();

  // Prometheus text: kforge_groups_total, kforge_group_samples_total,
  // kforge_groups_all_failed_total and the kforge_bdr_* series.
  std::string Metrics();

 private:
  const ApiLimits& limits_;
  const score::PrimeEchoOptions& prime_echo_;
  Evaluations* ev_;
  Bdr* bdr_;
  std::atomic<long long> groups_{0}, samples_{0}, all_failed_{0};
};

}  // namespace kf::serve
