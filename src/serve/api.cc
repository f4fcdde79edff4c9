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

void Refuse(const Status& why, ItemRequest* item) {
  std::string field = item->field;
  *item = ItemRequest{};
  item->field = std::move(field);
  item->fault = SampleFault{SampleFault::Kind::kRefused, why};
}

Status ReadOne(const json& obj, const std::string& where, const ApiLimits& lim, ItemRequest* item) {
  const std::string prefix = where.empty() ? "" : where + ".";
  if (!obj.is_object()) {
    return Status::Invalid("'" + (where.empty() ? std::string("body") : where) +
                           "' must be a JSON object");
  }
  Status s = StringField(obj, "candidate", prefix, kNoLimit, &item->candidate);
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
  if (item->candidate.size() > lim.max_candidate_bytes) {
    item->fault = TooLong("field '" + prefix + "candidate'", item->candidate.size(), lim);
    item->candidate.clear();
  }
  return Status::Ok();
}

// One item of /v1/evaluations or /v1/reward (the body itself when `where` is ""); what is wrong
// with it becomes its fault.
ItemRequest ParseOne(const json& obj, const std::string& where, const ApiLimits& lim) {
  ItemRequest item;
  item.field = where.empty() ? "body" : where;
  if (auto s = ReadOne(obj, where, lim, &item); !s.ok()) Refuse(s, &item);
  return item;
}

// The item's candidate is the answer found in `text`. An answer over the candidate limit is the
// model's fault, not the request's: the item's, and nothing is evaluated.
void TakeAnswer(const std::string& text, const Span& span, const std::string& field,
                const ApiLimits& lim, ItemRequest* item) {
  item->span = span;
  if (span.length_bytes > lim.max_candidate_bytes) {
    item->fault = TooLong("the answer in field '" + field + "'", span.length_bytes, lim);
    return;
  }
  item->candidate = std::string(span.Of(text));
}

// A format_error verdict for `job` whose diagnostic says why nothing was evaluated.
queue::JobView NotEvaluated(const queue::JobSpec& job, Diagnostic d, json stage_info) {
  Verdict v;
  v.problem_id = job.problem_id;
  v.problem_hash = job.problem_hash;
  v.candidate_hash = Sha256Hex(job.candidate);
  v.backend = job.backend;
  v.status = VerdictStatus::kFormatError;
  v.stages.push_back({"extract", false, 0, std::move(stage_info)});
  d.stage = "extract";
  v.diagnostics.push_back(std::move(d));
  score::Finish(&v);
  queue::JobView out;
  out.state = queue::JobView::State::kDone;
  out.result = queue::JobResult{std::move(v), "front", 0};
  return out;
}

}  // namespace

SampleFault TooLong(const std::string& what, size_t bytes, const ApiLimits& lim) {
  return SampleFault{SampleFault::Kind::kTooLong,
                     Status::Invalid(what + " is " + std::to_string(bytes) +
                                     " bytes, longer than " +
                                     std::to_string(lim.max_candidate_bytes) + " bytes (the limit)")};
}

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
      out.push_back(ParseOne(items[i], "items[" + std::to_string(i) + "]", lim));
    }
    return out;
  }
  out.push_back(ParseOne(body, "", lim));
  return out;
}

bool Evaluates(const ItemRequest& item) {
  return !item.fault && !(item.span && !item.span->found());
}

Status AllRefused(const std::vector<ItemRequest>& items) {
  for (const auto& item : items) {
    if (!item.fault || item.fault->kind != SampleFault::Kind::kRefused) return Status::Ok();
  }
  return items.empty() ? Status::Ok() : items[0].fault->why;
}

Status AnyFault(const std::vector<ItemRequest>& items) {
  for (const auto& item : items) {
    if (item.fault) return item.fault->why;
  }
  return Status::Ok();
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
  // A sample that is wrong is refused alone: the batch's other samples are evaluated.
  std::vector<ItemRequest> out(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    const std::string idx = "[" + std::to_string(i) + "]";
    ItemRequest& item = out[i];
    item.field = "labels" + idx;
    Status s = q[i].is_string() ? ItemFromLabel(l[i], "labels" + idx, &item)
                                : Status::Invalid("field 'query" + idx + "' must be a string");
    if (s.ok() && *prompts && !(**prompts)[i].is_string()) {
      s = Status::Invalid("field 'prompts" + idx + "' must be a string");
    }
    if (!s.ok()) {
      Refuse(s, &item);
      continue;
    }
    const std::string prompt = *prompts ? (**prompts)[i].get<std::string>() : std::string();
    const std::string& query = q[i].get_ref<const std::string&>();
    TakeAnswer(query, SplitQuery(query, prompt), "query" + idx, lim, &item);
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
  TakeAnswer(response, SplitResponse(response, prompt), "response", lim, &item);
  return item;
}

queue::JobView NoAnswer(const queue::JobSpec& job, const Span& span) {
  Diagnostic d;
  d.code = "no_answer";
  d.message =
      "the response could not be told from the prompt, so nothing was evaluated: " + span.why;
  d.hint =
      "send the prompts exactly as the query holds them (OpenRLHF does), or apply a chat "
      "template so the assistant's turn is marked";
  return NotEvaluated(job, std::move(d), {{"answer", SpanJson(span)}});
}

queue::JobView Unevaluated(const queue::JobSpec& job, const ItemRequest& item) {
  if (!item.fault) return NoAnswer(job, item.span ? *item.span : Span{});
  if (item.fault->kind == SampleFault::Kind::kRefused) return queue::JobView{};
  Diagnostic d;
  d.code = "answer_too_long";
  d.message = item.fault->why.message() + ", so nothing was evaluated";
  d.hint =
      "a kernel fits in far less: an answer this long usually repeats itself up to the "
      "generation limit (reasoning before </think> is skipped and does not count)";
  return NotEvaluated(job, std::move(d),
                      item.span ? json{{"answer", SpanJson(*item.span)}} : json::object());
}

std::string WhyUnevaluated(const ItemRequest& item) {
  if (item.fault) return item.fault->why.message();
  if (item.span && !item.span->found()) {
    return "the response could not be told from the prompt: " + item.span->why;
  }
  return "";
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

json ItemResultJson(const std::string& id, const queue::JobView& v, const ItemRequest& item) {
  if (Evaluates(item)) return RewardJson(id, v);
  json j = item.fault && item.fault->kind == SampleFault::Kind::kRefused
               ? json{{"state", "refused"}, {"status", nullptr}, {"reward", nullptr}}
               : RewardJson("", v);
  j["id"] = nullptr;
  j["error"] = WhyUnevaluated(item);
  return j;
}

json OpenRlhfResponse(const std::vector<queue::JobView>& views,
                      const std::vector<ItemRequest>& items, double missing_reward) {
  json rewards = json::array(), correct = json::array(), speedup = json::array(),
       infra = json::array(), spans = json::array(), refused = json::array(),
       too_long = json::array(), errors = json::array();
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
    const SampleFault* fault = i < items.size() && items[i].fault ? &*items[i].fault : nullptr;
    refused.push_back(fault && fault->kind == SampleFault::Kind::kRefused ? 1.0 : 0.0);
    too_long.push_back(fault && fault->kind == SampleFault::Kind::kTooLong ? 1.0 : 0.0);
    const std::string why = i < items.size() ? WhyUnevaluated(items[i]) : "";
    errors.push_back(why.empty() ? json(nullptr) : json(why));
    const Span sp = i < items.size() && items[i].span ? *items[i].span : Span{};
    by_prompt.push_back(sp.method == Span::Method::kAfterPrompt ? 1.0 : 0.0);
    by_marker.push_back(sp.method == Span::Method::kAfterMarker ? 1.0 : 0.0);
    failed.push_back(i < items.size() && items[i].span && !sp.found() ? 1.0 : 0.0);
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
            {"refused", refused},
            {"answer_too_long", too_long},
            {"split_after_prompt", by_prompt},
            {"split_after_marker", by_marker},
            {"split_failed", failed},
            {"answer_offset_bytes", offset},
            {"answer_bytes", length}}},
          {"spans", spans},
          {"errors", errors}};
}

json ErrorJson(const std::string& message) { return {{"error", message}}; }

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace kf::serve
