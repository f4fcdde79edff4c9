// trajectory: POST /v1/trajectory-reward, a multi-turn trajectory's turns in, its PrimeEcho
// reward out (score::PrimeEcho, the function `kforge generate` uses; docs/API.md). The
// documents and the scoring, apart from HTTP so they can be tested alone.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "queue/job.h"
#include "score/score.h"
#include "serve/api.h"

namespace kf::serve {

inline constexpr size_t kMaxTurns = 64;  // per trajectory; repair loops run a handful

// One turn, in one of three forms (exactly one of "candidate", "id", "reward" per turn).
struct TurnRequest {
  enum class Kind {
    kCandidate,  // {"candidate": text}: evaluated with the request
    kId,         // {"id": evaluation id}: a job submitted before (POST /v1/evaluations)
    kReward,     // {"reward": r, "status": name} or {"reward": r, "passed": bool}: scored elsewhere
  };
  Kind kind = Kind::kCandidate;
  std::string field;  // "trajectories[0].turns[2]"
  std::string candidate;
  std::string id;
  double reward = 0;
  bool passed = false;  // kReward: status ok, or "passed": true
};

struct TrajectoryRequest {
  std::string field;               // "trajectories[1]", or "body" for the single form
  std::string problem;             // required when a turn has a candidate; as for /v1/reward
  std::string problem_source;      // (exactly one of the two then)
  std::string trajectory_id;       // echoed back; "" when not sent
  std::vector<TurnRequest> turns;  // turn 1 first
};

struct TrajectoryBody {
  std::vector<TrajectoryRequest> trajectories;
  score::PrimeEchoOptions options;  // the service's defaults, with the body's overrides
};

// {"trajectories": [t, ...]} or one trajectory's fields at the top level; t is
// {"problem"|"problem_source"?, "turns": [...], "trajectory_id"?}. The body may set "alpha"
// (in [0, 1]), "bonus_turn1" and "bonus_turn2" (finite, >= 0) for all its trajectories. At most
// lim.max_items turns in the body, kMaxTurns per trajectory.
Result<TrajectoryBody> ParseTrajectories(const nlohmann::json& body, const ApiLimits& lim,
                                         const score::PrimeEchoOptions& defaults);

// The items to evaluate: every candidate turn of every trajectory, in order.
std::vector<ItemRequest> CandidateItems(const std::vector<TrajectoryRequest>& ts);

// A turn's outcome once its verdict is known (or given).
struct TurnOutcome {
  std::optional<double> reward;  // none: infra_error, lost, not finished by the deadline
  bool passed = false;
};
TurnOutcome TurnOutcomeOf(const queue::JobView& v);

struct TrajectoryScore {
  // PrimeEcho of the turns' rewards; none when a turn has no reward (infra_error, lost or not
  // finished): an infrastructure failure gives no reward, and dropping the turn would shift
  // s_first and the early-success bonus.
  std::optional<double> reward;
  int first_pass_turn = 0;         // 1-based; 0 when no turn passed
  std::vector<int> missing_turns;  // 1-based turns without a reward
};
TrajectoryScore ScoreTrajectory(const std::vector<TurnOutcome>& turns,
                                const score::PrimeEchoOptions& opt);

}  // namespace kf::serve
