#include "serve/rl_routes.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "serve/groups.h"
#include "serve/trajectory.h"

namespace kf::serve {
namespace {
using nlohmann::json;
using queue::JobView;

json OrNull(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

// An integer in [lo, hi] from a query parameter: digits only ("3", not "3.0", "-1" or "3abc").
Result<int64_t> ParseCount(const std::string& text, const char* name, int64_t lo, int64_t hi) {
  const std::string want = std::string("query parameter '") + name + "' must be an integer in [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos)
    return Status::Invalid(want + ", not '" + text.substr(0, 40) + "'");
  const int64_t v = std::strtoll(text.c_str(), nullptr, 10);
  if (v < lo || v > hi) return Status::Invalid(want + ", not " + text);
  return v;
}

Result<double> ParseProbability(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v < 0 || v > 1) {
    return Status::Invalid("query parameter 'p' must be a probability in [0, 1], not '" +
                           text.substr(0, 40) + "'");
  }
  return v;
}

json TurnJson(int turn, const TurnOutcome& o, const std::string& id, const JobView* v) {
  json j = {{"turn", turn}, {"reward", OrNull(o.reward)}, {"passed", o.passed}};
  if (!id.empty()) j["id"] = id;
  if (v) {
    j["state"] = queue::StateName(v->state);
    if (v->result) j["status"] = StatusName(v->result->verdict.status);
  }
  return j;
}

std::string Num(double v) {
  std::ostringstream o;
  o.precision(10);
  o << v;
  return o.str();
}

void Series(std::ostringstream& o, const char* name, const char* type, const char* help,
            const std::string& value) {
  o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n"
    << name << " " << value << "\n";
}

}  // namespace

RlRoutes::RlRoutes(const ApiLimits& limits, const score::PrimeEchoOptions& prime_echo,
                   Evaluations* ev, Bdr* bdr)
    : limits_(limits), prime_echo_(prime_echo), ev_(ev), bdr_(bdr) {}

namespace {

// The group's error: its own fault, else the refusal its samples all share (an unknown problem).
json GroupError(const GroupRequest& g, const std::vector<ItemRequest>& items, size_t first) {
  if (g.fault) return g.fault->message();
  if (g.candidates.empty()) return nullptr;
  for (size_t i = first; i < first + g.candidates.size(); ++i) {
    const auto& f = items[i].fault;
    if (!f || f->kind != SampleFault::Kind::kRefused) return nullptr;
  }
  return items[first].fault->why.message();
}

}  // namespace

Result<json> RlRoutes::Groups(const json& body, Clock::time_point deadline) {
  auto groups = ParseGroups(body, limits_);
  if (!groups.ok()) return groups.status();
  std::vector<ItemRequest> items = GroupItems(*groups);
  if (items.empty()) return *(*groups)[0].fault;  // no group has a list of candidates
  std::vector<std::string> ids;
  // Every sample of every group at once: the request takes the time of its slowest sample.
  auto views = ev_->RunEach(&items, deadline, &ids);
  if (!views.ok()) return views.status();
  json out = json::array();
  size_t k = 0;
  for (const auto& g : *groups) {
    std::vector<SampleOutcome> outcomes;
    json rewards = json::array(), results = json::array();
    const json error = GroupError(g, items, k);
    for (size_t i = 0; i < g.candidates.size(); ++i, ++k) {
      outcomes.push_back(OutcomeOf((*views)[k]));
      rewards.push_back(OrNull(outcomes.back().reward));
      results.push_back(ItemResultJson(ids[k], (*views)[k], items[k]));
    }
    const GroupStats st = ComputeGroupStats(outcomes);
    json adv = json::array();
    for (const auto& a : st.advantages) adv.push_back(OrNull(a));
    json one = {{"group_id", g.group_id.empty() ? json(nullptr) : json(g.group_id)},
                {"rewards", rewards},
                {"advantages", adv},
                {"stats", GroupStatsJson(st)},
                {"all_failed", st.all_failed},
                {"bdr_recorded", false},
                {"results", results}};
    if (!g.problem.empty()) one["problem"] = g.problem;
    if (!error.is_null()) one["error"] = error;
    if (bdr_ && error.is_null()) {
      auto rec = bdr_->Record(g, st);
      if (rec.ok()) {
        one["bdr_recorded"] = *rec;
      } else {
        one["bdr_error"] = rec.status().message();  // the rewards are still answered
      }
    }
    groups_ += 1;
    samples_ += static_cast<long long>(g.candidates.size());
    all_failed_ += st.all_failed ? 1 : 0;
    out.push_back(std::move(one));
  }
  return json{{"groups", out}};
}

Result<json> RlRoutes::TrajectoryReward(const json& body, Clock::time_point deadline) {
  auto parsed = ParseTrajectories(body, limits_, prime_echo_);
  if (!parsed.ok()) return parsed.status();
  const auto& ts = parsed->trajectories;
  // Ids are checked before anything is submitted: a bad request starts nothing.
  for (const auto& tr : ts) {
    for (const auto& t : tr.turns) {
      if (t.kind != TurnRequest::Kind::kId) continue;
      auto v = ev_->Await(t.id, Clock::now());
      if (!v.ok()) {
        if (v.status().code() == Code::kNotFound) {
          return Status::NotFound("no evaluation with id '" + t.id + "' in '" + t.field + ".id'");
        }
        return v.status();
      }
    }
  }
  std::vector<std::string> ids;
  std::vector<JobView> views;
  const std::vector<ItemRequest> items = CandidateItems(ts);
  if (!items.empty()) {
    auto v = ev_->Run(items, deadline, &ids);
    if (!v.ok()) return v.status();
    views = std::move(v.value());
  }
  json out = json::array(), rewards = json::array();
  size_t k = 0;
  for (const auto& tr : ts) {
    std::vector<TurnOutcome> outcomes;
    json turns = json::array();
    for (size_t i = 0; i < tr.turns.size(); ++i) {
      const TurnRequest& t = tr.turns[i];
      const int turn = static_cast<int>(i) + 1;
      if (t.kind == TurnRequest::Kind::kReward) {
        outcomes.push_back({t.reward, t.passed});
        turns.push_back(TurnJson(turn, outcomes.back(), "", nullptr));
        continue;
      }
      JobView view;
      std::string id;
      if (t.kind == TurnRequest::Kind::kCandidate) {
        id = ids[k];
        view = views[k++];
      } else {
        id = t.id;
        auto v = ev_->Await(t.id, deadline);
        if (v.ok())
          view = *v;
        else
          view.state = JobView::State::kQueued;  // could not be asked now: no reward yet
      }
      outcomes.push_back(TurnOutcomeOf(view));
      turns.push_back(TurnJson(turn, outcomes.back(), id, &view));
    }
    const TrajectoryScore sc = ScoreTrajectory(outcomes, parsed->options);
    rewards.push_back(OrNull(sc.reward));
    out.push_back(
        {{"trajectory_id", tr.trajectory_id.empty() ? json(nullptr) : json(tr.trajectory_id)},
         {"reward", OrNull(sc.reward)},
         {"first_pass_turn", sc.first_pass_turn},
         {"missing_turns", sc.missing_turns},
         {"turns", turns}});
  }
  const auto& o = parsed->options;
  return json{
      {"rewards", rewards},
      {"trajectories", out},
      {"options",
       {{"alpha", o.alpha}, {"bonus_turn1", o.bonus_turn1}, {"bonus_turn2", o.bonus_turn2}}}};
}

Result<json> RlRoutes::BdrSample(const std::optional<std::string>& n_text,
                                 const std::optional<std::string>& p_text) {
  if (!bdr_) return Status::NotFound("BDR is not configured on this service");
  if (!n_text) {
    return Status::Invalid("query parameter 'n' is required: how many batch slots to fill");
  }
  auto n = ParseCount(*n_text, "n", 1, kMaxReplaySample);
  if (!n.ok()) return n.status();
  std::optional<double> p;
  if (p_text) {
    auto pp = ParseProbability(*p_text);
    if (!pp.ok()) return pp.status();
    p = *pp;
  }
  auto s = bdr_->Draw(*n, p);
  if (!s.ok()) return s.status();
  json replay = json::array();
  for (const auto& e : s->replay) replay.push_back(ReplayEntryJson(e));
  json out = {{"n", *n}, {"p", s->p}, {"replay", replay}, {"fresh", s->fresh}};
  if (auto size = bdr_->Size(); size.ok()) out["buffered"] = *size;
  return out;
}

Result<json> RlRoutes::BdrStatus() {
  if (!bdr_) return Status::NotFound("BDR is not configured on this service");
  auto size = bdr_->Size();
  if (!size.ok()) return size.status();
  const BdrCounts c = bdr_->counts();
  return json{{"storage", bdr_->storage_name()},
              {"capacity", bdr_->options().capacity},
              {"replay_prob", bdr_->options().replay_prob},
              {"buffered", *size},
              {"recorded_total", c.recorded},
              {"replayed_total", c.replayed},
              {"evicted_total", c.evicted},
              {"errors_total", c.errors}};
}

std::string RlRoutes::Metrics() {
  std::ostringstream o;
  Series(o, "kforge_groups_total", "counter", "groups answered by POST /v1/groups",
         std::to_string(groups_.load()));
  Series(o, "kforge_group_samples_total", "counter", "samples of the groups answered",
         std::to_string(samples_.load()));
  Series(o, "kforge_groups_all_failed_total", "counter",
         "groups answered whose samples all had a reward and none passed",
         std::to_string(all_failed_.load()));
  if (!bdr_) return o.str();
  const BdrCounts c = bdr_->counts();
  if (auto size = bdr_->Size(); size.ok()) {
    Series(o, "kforge_bdr_groups", "gauge", "all-failed groups buffered for replay (BDR)",
           std::to_string(*size));
  }
  Series(o, "kforge_bdr_capacity", "gauge", "groups BDR keeps; the oldest go first beyond",
         std::to_string(bdr_->options().capacity));
  Series(o, "kforge_bdr_replay_probability", "gauge", "default probability of a replay per slot",
         Num(bdr_->options().replay_prob));
  Series(o, "kforge_bdr_recorded_total", "counter",
         "all-failed groups recorded (repeats of a buffered prompt included)",
         std::to_string(c.recorded));
  Series(o, "kforge_bdr_replayed_total", "counter", "prompts handed out by GET /v1/bdr/sample",
         std::to_string(c.replayed));
  Series(o, "kforge_bdr_evicted_total", "counter", "buffered groups dropped, oldest first",
         std::to_string(c.evicted));
  Series(o, "kforge_bdr_errors_total", "counter",
         "all-failed groups not recorded because the store or Redis failed",
         std::to_string(c.errors));
  return o.str();
}

}  // namespace kf::serve
