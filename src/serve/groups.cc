#include "serve/groups.h"

#include <algorithm>
#include <cmath>

namespace kf::serve {
namespace {
using nlohmann::json;

// An optional string field: absent or null leaves *out empty.
Status OptionalString(const json& obj, const char* key, const std::string& prefix, size_t max_bytes,
                      std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return Status::Invalid("field '" + prefix + key + "' must be a string");
  *out = it->get<std::string>();
  if (out->size() > max_bytes) {
    return Status::Invalid("field '" + prefix + key + "' is longer than " +
                           std::to_string(max_bytes) + " bytes");
  }
  return Status::Ok();
}

// The group's candidates: each a string within the candidate limit, else that sample's fault.
// An error is the envelope's (more candidates in all than the limit) or the group's.
Status ParseCandidates(const json& obj, const std::string& prefix, const ApiLimits& lim,
                       size_t* candidates_left, GroupRequest* g, std::optional<Status>* fault) {
  auto c = obj.find("candidates");
  if (c == obj.end() || c->is_null()) {
    *fault = Status::Invalid("field '" + prefix +
                             "candidates' is required (a list of the group's samples)");
    return Status::Ok();
  }
  if (!c->is_array()) {
    *fault = Status::Invalid("field '" + prefix + "candidates' must be a list");
    return Status::Ok();
  }
  if (c->empty()) {
    *fault = Status::Invalid("field '" + prefix + "candidates' is empty");
    return Status::Ok();
  }
  if (c->size() > *candidates_left) {
    return Status::Invalid("the groups hold more than " + std::to_string(lim.max_items) +
                           " candidates in all (at '" + prefix + "candidates')");
  }
  *candidates_left -= c->size();
  for (size_t i = 0; i < c->size(); ++i) {
    const std::string f = "field '" + prefix + "candidates[" + std::to_string(i) + "]'";
    std::optional<SampleFault> bad;
    std::string text;
    if (!(*c)[i].is_string()) {
      bad = SampleFault{SampleFault::Kind::kRefused, Status::Invalid(f + " must be a string")};
    } else if (size_t n = (*c)[i].get_ref<const std::string&>().size();
               n > lim.max_candidate_bytes) {
      bad = TooLong(f, n, lim);
    } else {
      text = (*c)[i].get<std::string>();
    }
    g->candidates.push_back(std::move(text));
    g->faults.push_back(std::move(bad));
  }
  return Status::Ok();
}

// The group's own fields; the first wrong one is the group's fault.
Status ParseFields(const json& obj, const std::string& prefix, const ApiLimits& lim,
                   GroupRequest* g) {
  if (auto s = OptionalString(obj, "group_id", prefix, 200, &g->group_id); !s.ok()) return s;
  if (auto s = OptionalString(obj, "problem", prefix, 200, &g->problem); !s.ok()) return s;
  if (auto s =
          OptionalString(obj, "problem_source", prefix, lim.max_problem_bytes, &g->problem_source);
      !s.ok()) {
    return s;
  }
  if (g->problem.empty() == g->problem_source.empty()) {
    return Status::Invalid("exactly one of '" + prefix +
                           "problem' (a registered problem id) and '" + prefix +
                           "problem_source' (a problem's text) is required");
  }
  if (auto s = OptionalString(obj, "prompt", prefix, kMaxPromptBytes, &g->prompt); !s.ok()) {
    return s;
  }
  auto m = obj.find("metadata");
  if (m != obj.end() && !m->is_null()) {
    if (!m->is_object()) return Status::Invalid("field '" + prefix + "metadata' must be an object");
    if (Dump(*m).size() > kMaxMetadataBytes) {
      return Status::Invalid("field '" + prefix + "metadata' is larger than " +
                             std::to_string(kMaxMetadataBytes) + " bytes as JSON");
    }
    g->metadata = *m;
  }
  return Status::Ok();
}

// One group. An error is the envelope's; what is wrong with the group is its fault.
Status ParseGroup(const json& obj, const std::string& where, const ApiLimits& lim,
                  size_t* candidates_left, GroupRequest* g) {
  const std::string prefix = where == "body" ? "" : where + ".";
  g->field = where;
  if (!obj.is_object()) {
    g->fault = Status::Invalid("'" + where + "' must be a JSON object");
    return Status::Ok();
  }
  std::optional<Status> fault;
  if (auto s = ParseCandidates(obj, prefix, lim, candidates_left, g, &fault); !s.ok()) return s;
  if (auto s = ParseFields(obj, prefix, lim, g); !s.ok()) {
    g->fault = s;
  } else {
    g->fault = fault;
  }
  if (g->fault) g->candidates.assign(g->candidates.size(), "");
  return Status::Ok();
}

json OrNull(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

}  // namespace

Result<std::vector<GroupRequest>> ParseGroups(const json& body, const ApiLimits& lim) {
  if (!body.is_object()) return Status::Invalid("the body must be a JSON object");
  std::vector<GroupRequest> out;
  size_t left = lim.max_items;
  if (!body.contains("groups")) {
    GroupRequest g;
    if (auto s = ParseGroup(body, "body", lim, &left, &g); !s.ok()) return s;
    out.push_back(std::move(g));
    return out;
  }
  const json& groups = body["groups"];
  if (!groups.is_array()) return Status::Invalid("field 'groups' must be a list");
  if (groups.empty()) return Status::Invalid("field 'groups' is empty");
  for (size_t i = 0; i < groups.size(); ++i) {
    GroupRequest g;
    if (auto s = ParseGroup(groups[i], "groups[" + std::to_string(i) + "]", lim, &left, &g);
        !s.ok()) {
      return s;
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::vector<ItemRequest> GroupItems(const std::vector<GroupRequest>& groups) {
  std::vector<ItemRequest> items;
  for (const auto& g : groups) {
    const std::string prefix = g.field == "body" ? "" : g.field + ".";
    for (size_t i = 0; i < g.candidates.size(); ++i) {
      ItemRequest it;
      it.problem = g.problem;
      it.problem_source = g.problem_source;
      it.candidate = g.candidates[i];
      it.field = prefix + "candidates[" + std::to_string(i) + "]";
      if (g.fault) {
        it.fault = SampleFault{SampleFault::Kind::kRefused, *g.fault};
      } else if (g.faults[i]) {
        it.fault = g.faults[i];
      }
      items.push_back(std::move(it));
    }
  }
  return items;
}

SampleOutcome OutcomeOf(const queue::JobView& v) {
  SampleOutcome o;
  o.reward = RewardOf(v);
  o.passed = v.result && v.result->verdict.status == VerdictStatus::kOk;
  return o;
}

GroupStats ComputeGroupStats(const std::vector<SampleOutcome>& samples) {
  GroupStats s;
  s.n = samples.size();
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  for (const auto& o : samples) {
    if (o.passed) ++s.pass_count;
    if (!o.reward) continue;
    ++s.rewarded;
    sum += *o.reward;
    lo = std::min(lo, *o.reward);
    hi = std::max(hi, *o.reward);
  }
  s.advantages.assign(samples.size(), std::nullopt);
  s.all_failed = s.n > 0 && s.rewarded == s.n && s.pass_count == 0;
  if (s.rewarded == 0) return s;
  // Equal rewards have exactly that mean (a sum's rounding would leave advantages of 1e-10).
  const double mean = lo == hi ? lo : sum / static_cast<double>(s.rewarded);
  double sq = 0;
  for (const auto& o : samples) {
    if (o.reward) sq += (*o.reward - mean) * (*o.reward - mean);
  }
  const double sd = s.rewarded > 1 ? std::sqrt(sq / static_cast<double>(s.rewarded - 1)) : 0.0;
  s.mean = mean;
  s.std = sd;
  s.min = lo;
  s.max = hi;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].reward) s.advantages[i] = (*samples[i].reward - mean) / (sd + kAdvantageEps);
  }
  return s;
}

json GroupStatsJson(const GroupStats& s) {
  return {{"n", s.n},
          {"rewarded", s.rewarded},
          {"pass_count", s.pass_count},
          {"mean", OrNull(s.mean)},
          {"std", OrNull(s.std)},
          {"min", OrNull(s.min)},
          {"max", OrNull(s.max)}};
}

}  // namespace kf::serve
