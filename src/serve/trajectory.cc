#include "serve/trajectory.h"

#include <cmath>
#include <tuple>

namespace kf::serve {
namespace {
using nlohmann::json;

// A finite number in [lo, hi] from `key`, if present; `range` says which in the error.
Status NumberOption(const json& body, const char* key, double lo, double hi, const char* range,
                    double* out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < lo ||
      it->get<double>() > hi) {
    return Status::Invalid("field '" + std::string(key) + "' must be a number " + range);
  }
  *out = it->get<double>();
  return Status::Ok();
}

Status ParseTurn(const json& t, const std::string& where, const ApiLimits& lim, TurnRequest* out) {
  if (!t.is_object()) return Status::Invalid("'" + where + "' must be a JSON object");
  out->field = where;
  const int forms = (t.contains("candidate") ? 1 : 0) + (t.contains("id") ? 1 : 0) +
                    (t.contains("reward") ? 1 : 0);
  if (forms != 1) {
    return Status::Invalid("'" + where +
                           "' must hold exactly one of 'candidate' (evaluated now), 'id' (an "
                           "evaluation submitted before) and 'reward' (with 'status' or 'passed')");
  }
  if (t.contains("candidate")) {
    out->kind = TurnRequest::Kind::kCandidate;
    if (!t["candidate"].is_string()) {
      return Status::Invalid("field '" + where + ".candidate' must be a string");
    }
    out->candidate = t["candidate"].get<std::string>();
    if (out->candidate.size() > lim.max_candidate_bytes) {
      return Status::Invalid("field '" + where + ".candidate' is longer than " +
                             std::to_string(lim.max_candidate_bytes) + " bytes");
    }
    return Status::Ok();
  }
  if (t.contains("id")) {
    out->kind = TurnRequest::Kind::kId;
    if (!t["id"].is_string() || t["id"].get<std::string>().empty() ||
        t["id"].get<std::string>().size() > 200) {
      return Status::Invalid("field '" + where + ".id' must be an evaluation id (a string)");
    }
    out->id = t["id"].get<std::string>();
    return Status::Ok();
  }
  out->kind = TurnRequest::Kind::kReward;
  const json& r = t["reward"];
  if (!r.is_number() || !std::isfinite(r.get<double>())) {
    return Status::Invalid("field '" + where + ".reward' must be a finite number");
  }
  out->reward = r.get<double>();
  const bool has_status = t.contains("status"), has_passed = t.contains("passed");
  if (has_status == has_passed) {
    return Status::Invalid("'" + where +
                           "' gives a reward: it needs exactly one of 'status' (the verdict's "
                           "status, e.g. \"ok\") and 'passed' (true when correct and legal)");
  }
  if (has_passed) {
    if (!t["passed"].is_boolean()) {
      return Status::Invalid("field '" + where + ".passed' must be true or false");
    }
    out->passed = t["passed"].get<bool>();
    return Status::Ok();
  }
  VerdictStatus st;
  if (!t["status"].is_string() || !StatusFromName(t["status"].get<std::string>(), &st)) {
    return Status::Invalid("field '" + where +
                           ".status' must be a verdict status (ok, format_error, compile_error, "
                           "runtime_error, timeout, incorrect, cheat)");
  }
  if (st == VerdictStatus::kInfraError) {
    return Status::Invalid("'" + where +
                           "' gives a reward with status infra_error, which has none; "
                           "evaluate the turn again");
  }
  out->passed = st == VerdictStatus::kOk;
  return Status::Ok();
}

Status ParseOne(const json& obj, const std::string& where, const ApiLimits& lim, size_t* turns_left,
                TrajectoryRequest* tr) {
  const std::string prefix = where == "body" ? "" : where + ".";
  if (!obj.is_object()) return Status::Invalid("'" + where + "' must be a JSON object");
  tr->field = where;
  for (auto [key, max, out] :
       {std::tuple{"problem", size_t{200}, &tr->problem},
        std::tuple{"problem_source", lim.max_problem_bytes, &tr->problem_source},
        std::tuple{"trajectory_id", size_t{200}, &tr->trajectory_id}}) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) continue;
    if (!it->is_string()) return Status::Invalid("field '" + prefix + key + "' must be a string");
    *out = it->get<std::string>();
    if (out->size() > max) {
      return Status::Invalid("field '" + prefix + key + "' is longer than " + std::to_string(max) +
                             " bytes");
    }
  }
  auto turns = obj.find("turns");
  if (turns == obj.end() || !turns->is_array()) {
    return Status::Invalid("field '" + prefix + "turns' is required (a list, turn 1 first)");
  }
  if (turns->empty()) return Status::Invalid("field '" + prefix + "turns' is empty");
  if (turns->size() > kMaxTurns) {
    return Status::Invalid("field '" + prefix + "turns' has " + std::to_string(turns->size()) +
                           " turns; at most " + std::to_string(kMaxTurns));
  }
  if (turns->size() > *turns_left) {
    return Status::Invalid("the trajectories hold more than " + std::to_string(lim.max_items) +
                           " turns in all (at '" + prefix + "turns')");
  }
  *turns_left -= turns->size();
  bool evaluates = false;
  for (size_t i = 0; i < turns->size(); ++i) {
    TurnRequest t;
    if (auto s = ParseTurn((*turns)[i], prefix + "turns[" + std::to_string(i) + "]", lim, &t);
        !s.ok()) {
      return s;
    }
    evaluates = evaluates || t.kind == TurnRequest::Kind::kCandidate;
    tr->turns.push_back(std::move(t));
  }
  if (!tr->problem.empty() && !tr->problem_source.empty()) {
    return Status::Invalid("give one of '" + prefix + "problem' and '" + prefix +
                           "problem_source', not both");
  }
  if (evaluates && tr->problem.empty() && tr->problem_source.empty()) {
    return Status::Invalid("'" + where +
                           "' has turns to evaluate ('candidate'): it needs 'problem' (a "
                           "registered id) or 'problem_source'");
  }
  return Status::Ok();
}

}  // namespace

Result<TrajectoryBody> ParseTrajectories(const json& body, const ApiLimits& lim,
                                         const score::PrimeEchoOptions& defaults) {
  if (!body.is_object()) return Status::Invalid("the body must be a JSON object");
  TrajectoryBody out;
  out.options = defaults;
  if (auto s = NumberOption(body, "alpha", 0, 1, "in [0, 1]", &out.options.alpha); !s.ok())
    return s;
  if (auto s = NumberOption(body, "bonus_turn1", 0, 1e6, "in [0, 1e6]", &out.options.bonus_turn1);
      !s.ok()) {
    return s;
  }
  if (auto s = NumberOption(body, "bonus_turn2", 0, 1e6, "in [0, 1e6]", &out.options.bonus_turn2);
      !s.ok()) {
    return s;
  }
  size_t left = lim.max_items;
  if (!body.contains("trajectories")) {
    TrajectoryRequest t;
    if (auto s = ParseOne(body, "body", lim, &left, &t); !s.ok()) return s;
    out.trajectories.push_back(std::move(t));
    return out;
  }
  const json& ts = body["trajectories"];
  if (!ts.is_array()) return Status::Invalid("field 'trajectories' must be a list");
  if (ts.empty()) return Status::Invalid("field 'trajectories' is empty");
  for (size_t i = 0; i < ts.size(); ++i) {
    TrajectoryRequest t;
    if (auto s = ParseOne(ts[i], "trajectories[" + std::to_string(i) + "]", lim, &left, &t);
        !s.ok()) {
      return s;
    }
    out.trajectories.push_back(std::move(t));
  }
  return out;
}

std::vector<ItemRequest> CandidateItems(const std::vector<TrajectoryRequest>& ts) {
  std::vector<ItemRequest> items;
  for (const auto& tr : ts) {
    for (const auto& t : tr.turns) {
      if (t.kind != TurnRequest::Kind::kCandidate) continue;
      ItemRequest it;
      it.problem = tr.problem;
      it.problem_source = tr.problem_source;
      it.candidate = t.candidate;
      it.field = t.field;
      items.push_back(std::move(it));
    }
  }
  return items;
}

TurnOutcome TurnOutcomeOf(const queue::JobView& v) {
  TurnOutcome o;
  o.reward = RewardOf(v);
  o.passed = v.result && v.result->verdict.status == VerdictStatus::kOk;
  return o;
}

TrajectoryScore ScoreTrajectory(const std::vector<TurnOutcome>& turns,
                                const score::PrimeEchoOptions& opt) {
  TrajectoryScore s;
  std::vector<double> rewards;
  for (size_t i = 0; i < turns.size(); ++i) {
    const int turn = static_cast<int>(i) + 1;
    if (!turns[i].reward) {
      s.missing_turns.push_back(turn);
      continue;
    }
    rewards.push_back(*turns[i].reward);
    if (s.first_pass_turn == 0 && turns[i].passed) s.first_pass_turn = turn;
  }
  if (s.missing_turns.empty() && !rewards.empty()) {
    s.reward = score::PrimeEcho(rewards, s.first_pass_turn, opt);
  }
  return s;
}

}  // namespace kf::serve
