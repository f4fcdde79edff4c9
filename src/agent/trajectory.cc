// The JSONL records of a generation run: one per turn, one per trajectory. Every field a
// trainer needs is on the line itself (SFT: messages + reply; rejection sampling: verdict;
// RL: per-turn reward and the trajectory's PrimeEcho reward).
#include "agent/agent.h"

namespace kf::agent {
using nlohmann::json;

namespace {
json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
}  // namespace

json TurnJson(const Turn& t) {
  return {{"type", "turn"},
          {"sample", t.sample},
          {"turn", t.turn},
          {"messages", model::ToJson(t.messages)},
          {"reply", t.reply},
          {"reasoning", t.reasoning},
          {"finish_reason", t.finish_reason},
          {"candidate", t.candidate},
          {"verdict", t.verdict ? ToJson(*t.verdict) : json(nullptr)},
          {"status", t.verdict ? json(StatusName(t.verdict->status)) : json(nullptr)},
          {"reward", Optional(t.reward)},
          {"error", t.error.empty() ? json(nullptr) : json(t.error)},
          {"usage", t.usage},
          {"model_ms", t.model_ms},
          {"eval_ms", t.eval_ms}};
}

json TrajectoryJson(const Trajectory& t) {
  json best_speedup = nullptr;
  for (const auto& turn : t.turns) {
    if (turn.turn == t.best_turn && turn.verdict) {
      best_speedup = Optional(turn.verdict->speedup_vs_eager);
    }
  }
  return {{"type", "trajectory"},
          {"sample", t.sample},
          {"turns", t.turns.size()},
          {"rewards", t.rewards},
          {"first_pass_turn", t.first_pass_turn},
          {"prime_echo", t.prime_echo},
          {"best_turn", t.best_turn < 0 ? json(nullptr) : json(t.best_turn)},
          {"best_speedup_vs_eager", best_speedup},
          {"stop_reason", t.stop_reason}};
}

}  // namespace kf::agent
