#include "serve/api.h"

#include <cmath>
#include <cstdlib>

#include "common/hash.h"
#include "score/score.h"

namespace kf::serve {
namespace {
using nlohmann::json;
// The whole slime response and prompt are read (the body limit bounds them); the answer found
// in them is held to the candidate limit.
constexpr size_t kNoLimit = static_cast<size_t>(-1);

Status StringField(const json& obj, const char* key, const std::string& where, size_t max_bytes,
                   std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::NotFound(where + key);
  if (!it->is_string()) return Status::Invalid("field '" + where + key + "' must be a string");
  *out = it->get<std::string>();
  if (out->size() > max_bytes) {
    return Status::Invalid("field '" + where + key + "' is longer than " +
                           std::to_string(max_bytes) + " bytes");
  }
  return Status::Ok();
}

Status ParseOne(const json& obj, const std::string& where, const ApiLimits& lim,
                ItemRequest* item) {
  const std::string prefix = where.empty() ? "" : where + ".";
  if (!obj.is_object()) {
    return Status::Invalid("'" + (where.empty() ? std::string("body") : where) +
                           "' must be a JSON object");
  }
  item->field = where.empty() ? "body" : where;
  Status s = StringField(obj, "candidate", prefix, lim.max_candidate_bytes, &item->candidate);
  if (s.code() == Code::kNotFound) {
    return Status::Invalid("field '" + prefix + "candidate' is required (the candidate's text)");
  }
  if (!s.ok()) return s;
  Status p = StringField(obj, "problem", prefix, 200, &item->problem);
  if (!p.ok() && p.code() != Code::kNotFound) return p;
  Status ps =
      StringField(obj, "problem_source", prefix, lim.max_problem_bytes, &item->problem_source);
  if (!ps.ok() && ps.code() != Code::kNotFound) return ps;
  if (item->problem.empty() == item->problem_source.empty()) {
    return Status::Invalid("exactly one of '" + prefix +
                           "problem' (a registered problem id) and '" + prefix +
                           "problem_source' (a problem's text) is required");
  }
  return Status::Ok();
}

// The item's candidate is the answer found in `text`; an answer over the candidate limit is
// refused like a candidate over it.
Status TakeAnswer(const std::string& text, const Span& span, const std::string& field,
                  const ApiLimits& lim, ItemRequest* item) {
  if (span.length_bytes > lim.max_candidate_bytes) {
    return Status::Invalid("the answer in field '" + field + "' is longer than " +
                           std::to_string(lim.max_candidate_bytes) + " bytes");
  }
  item->candidate = std::string(span.Of(text));
  item->span = span;
  return Status::Ok();
}

}  // namespace

Result<std::vector<ItemRequest>> ParseItems(const json& body, const ApiLimits& lim) {
  std::vector<ItemRequest> out;
  if (!body.is_object()) return Status::Invalid("the body must be a JSON object");
  if (body.contains("items")) {
    const json& items = body["items"];
    if (!items.is_array()) return Status::Invalid("field 'items' must be an array");
    if (items.empty()) return Status::Invalid("field 'items' is empty");
    if (items.size() > lim.max_items) {
      return Status::Invalid("field 'items' has " + std::to_string(items.size()) +
                             " entries; at most " + std::to_string(lim.max_items));
    }
    for (size_t i = 0; i < items.size(); ++i) {
      ItemRequest item;
      if (auto s = ParseOne(items[i], "items[" + std::to_string(i) + "]", lim, &item); !s.ok()) {
        return s;
      }
      out.push_back(std::move(item));
    }
    return out;
  }
  ItemRequest item;
  if (auto s = ParseOne(body, "", lim, &item); !s.ok()) return s;
  out.push_back(std::move(item));
  return out;
}

Status ItemFromLabel(const json& label, const std::string& field, ItemRequest* item) {
  item->field = field;
  if (label.is_object()) {
    if (label.contains("problem") && label["problem"].is_string()) {
      item->problem = label["problem"].get<std::string>();
      return Status::Ok();
    }
    if (label.contains("problem_source") && label["problem_source"].is_string()) {
      item->problem_source = label["problem_source"].get<std::string>();
      return Status::Ok();
    }
    return Status::Invalid("field '" + field +
                           "' must hold 'problem' (an id) or 'problem_source' (a problem's text)");
  }
  if (!label.is_string() || label.get<std::string>().empty()) {
    return Status::Invalid("field '" + field +
                           "' must be a problem id such as \"level1/relu\" or a problem's source");
  }
  const std::string s = label.get<std::string>();
  if (s.find("class Model") != std::string::npos)
    item->problem_source = s;
  else
    item->problem = s;
  return Status::Ok();
}

Result<std::vector<ItemRequest>> ParseOpenRlhf(const json& body, const ApiLimits& lim) {
  if (!body.is_object()) return Status::Invalid("the body must be a JSON object");
  auto list = [&](const char* key, bool required) -> Result<const json*> {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) {
      if (required) return Status::Invalid(std::string("field '") + key + "' is required (a list)");
      return static_cast<const json*>(nullptr);
    }
    if (!it->is_array()) return Status::Invalid(std::string("field '") + key + "' must be a list");
    return &*it;
  };
  auto query = list("query", true);
  if (!query.ok()) return query.status();
  auto labels = list("labels", true);
  if (!labels.ok()) return labels.status();
  auto prompts = list("prompts", false);
  if (!prompts.ok()) return prompts.status();
  const json& q = **query;
  const json& l = **labels;
  if (q.size() > lim.max_items) {
    return Status::Invalid("field 'query' has " + std::to_string(q.size()) + " entries; at most " +
                           std::to_string(lim.max_items));
  }
  if (l.size() != q.size()) {
    return Status::Invalid("fields 'query' and 'labels' differ in length (" +
                           std::to_string(q.size()) + " and " + std::to_string(l.size()) + ")");
  }
  if (*prompts && (*prompts)->size() != q.size()) {
    return Status::Invalid("fields 'query' and 'prompts' differ in length");
  }
  std::vector<ItemRequest> out;
  for (size_t i = 0; i < q.size(); ++i) {
    const std::string idx = "[" + std::to_string(i) + "]";
    if (!q[i].is_string()) return Status::Invalid("field 'query" + idx + "' must be a string");
    ItemRequest item;
    if (auto s = ItemFromLabel(l[i], "labels" + idx, &item); !s.ok()) return s;
    std::string prompt;
    if (*prompts) {
      if (!(**prompts)[i].is_string()) {
        return Status::Invalid("field 'prompts" + idx + "' must be a string");
      }
      prompt = (**prompts)[i].get<std::string>();
    }
    const std::string& query = q[i].get_ref<const std::string&>();
    if (auto s = TakeAnswer(query, SplitQuery(query, prompt), "query" + idx, lim, &item); !s.ok()) {
      return s;
    }
    out.push_back(std::move(item));
  }
  return out;
}

Result<ItemRequest> ParseSlime(const json& body, const ApiLimits& lim) {
  if (!body.is_object()) return Status::Invalid("the body must be a JSON object");
  ItemRequest item;
  auto it = body.find("label");
  if (it == body.end() || it->is_null()) {
    return Status::Invalid("field 'label' is required (a problem id or a problem's source)");
  }
  if (auto s = ItemFromLabel(*it, "label", &item); !s.ok()) return s;
  std::string response, prompt;
  Status r = StringField(body, "response", "", kNoLimit, &response);
  if (r.code() == Code::kNotFound) {
    return Status::Invalid("field 'response' is required (the model's reply)");
  }
  if (!r.ok()) return r;
  Status p = StringField(body, "prompt", "", kNoLimit, &prompt);
  if (!p.ok() && p.code() != Code::kNotFound) return p;
  if (auto s = TakeAnswer(response, SplitResponse(response, prompt), "response", lim, &item);
      !s.ok()) {
    return s;
  }
  return item;
}

queue::JobView NoAnswer(const queue::JobSpec& job, const Span& span) {
  Verdict v;
  v.problem_id = job.problem_id;
  v.problem_hash = job.problem_hash;
  v.candidate_hash = Sha256Hex(job.candidate);
  v.backend = job.backend;
  v.status = VerdictStatus::kFormatError;
  v.stages.push_back({"extract", false, 0, {{"answer", SpanJson(span)}}});
  Diagnostic d;
  d.stage = "extract";
  d.code = "no_answer";
  d.message =
      "the response could not be told from the prompt, so nothing was evaluated: " + span.why;
  d.hint =
      "send the prompts exactly as the query holds them (OpenRLHF does), or apply a chat "
      "template so the assistant's turn is marked";
  v.diagnostics.push_back(std::move(d));
  score::Finish(&v);
  queue::JobView out;
  out.state = queue::JobView::State::kDone;
  out.result = queue::JobResult{std::move(v), "front", 0};
  return out;
}

Result<double> ParseSeconds(const std::string& text, const std::string& field) {
  const std::string want = "'" + field + "' must be a number of seconds >= 0";
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || !std::isfinite(v) || v < 0) {
    return Status::Invalid(want + ", not '" + text.substr(0, 40) + "'");
  }
  return v;
}

Result<std::optional<double>> SecondsField(const json& body, const std::string& key) {
  if (!body.is_object()) return std::optional<double>();
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::optional<double>();
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) {
    return Status::Invalid("field '" + key + "' must be a number of seconds >= 0");
  }
  return std::optional<double>(it->get<double>());
}

json ViewJson(const std::string& id, const queue::JobView& v) {
  // One vocabulary for every route and both engines: queued, running, done, lost (a lost job
  // carries its infra_error verdict below, so a client never waits on it).
  json j = {{"id", id}, {"state", queue::StateName(v.state)}};
  if (v.result) {
    j["status"] = StatusName(v.result->verdict.status);
    j["verdict"] = ToJson(v.result->verdict);
    j["worker"] = v.result->worker;
    j["deliveries"] = v.result->deliveries;
  }
  return j;
}

std::optional<double> RewardOf(const queue::JobView& v) {
  if (!v.result) return std::nullopt;
  return v.result->verdict.reward;
}

json RewardJson(const std::string& id, const queue::JobView& v) {
  json j = ViewJson(id, v);
  auto r = RewardOf(v);
  j["reward"] = r ? json(*r) : json(nullptr);
  if (v.result) {
    const Verdict& vd = v.result->verdict;
    j["correct_trials"] = {{"passed", vd.trials_passed}, {"total", vd.trials_total}};
    j["speedup_vs_eager"] = vd.speedup_vs_eager ? json(*vd.speedup_vs_eager) : json(nullptr);
    j["speedup_vs_compile"] = vd.speedup_vs_compile ? json(*vd.speedup_vs_compile) : json(nullptr);
    j["candidate_ms"] = vd.candidate_ms ? json(vd.candidate_ms->median_ms) : json(nullptr);
    j["feedback"] = vd.feedback;
  }
  return j;
}

json OpenRlhfResponse(const std::vector<queue::JobView>& views,
                      const std::vector<ItemRequest>& items, double missing_reward) {
  json rewards = json::array(), correct = json::array(), speedup = json::array(),
       infra = json::array(), spans = json::array();
  json by_prompt = json::array(), by_marker = json::array(), failed = json::array(),
       offset = json::array(), length = json::array();
  for (size_t i = 0; i < views.size(); ++i) {
    const auto& v = views[i];
    auto r = RewardOf(v);
    rewards.push_back(r ? *r : missing_reward);
    const Verdict* vd = v.result ? &v.result->verdict : nullptr;
    correct.push_back(vd && vd->status == VerdictStatus::kOk ? 1.0 : 0.0);
    speedup.push_back(vd && vd->speedup_vs_eager ? *vd->speedup_vs_eager : 0.0);
    infra.push_back(!r ? 1.0 : 0.0);
    const Span sp = i < items.size() && items[i].span ? *items[i].span : Span{};
    by_prompt.push_back(sp.method == Span::Method::kAfterPrompt ? 1.0 : 0.0);
    by_marker.push_back(sp.method == Span::Method::kAfterMarker ? 1.0 : 0.0);
    failed.push_back(sp.found() ? 0.0 : 1.0);
    offset.push_back(static_cast<double>(sp.offset_bytes));
    length.push_back(static_cast<double>(sp.length_bytes));
    spans.push_back(SpanJson(sp));
  }
  return {{"rewards", rewards},
          {"scores", rewards},
          {"extra_logs",
           {{"correct", correct},
            {"speedup", speedup},
            {"no_reward", infra},
            {"split_after_prompt", by_prompt},
            {"split_after_marker", by_marker},
            {"split_failed", failed},
            {"answer_offset_bytes", offset},
            {"answer_bytes", length}}},
          {"spans", spans}};
}

json ErrorJson(const std::string& message) { return {{"error", message}}; }

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace kf::serve
