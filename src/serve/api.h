// api: the reward service's request and response documents (docs/API.md), apart from HTTP so
// they can be tested alone. Parsers never throw; an error names the offending field.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "queue/job.h"

namespace kf::serve {

// Limits that keep one request from taking the service down; each is checked while parsing.
struct ApiLimits {
  size_t max_items = 4096;               // per batch
  size_t max_candidate_bytes = 1 << 20;  // 1 MiB: far above any real kernel
  size_t max_problem_bytes = 1 << 20;
};

// One evaluation asked for: a registered problem by id, or a problem's source sent inline.
struct ItemRequest {
  std::string problem;         // "level1/relu"; empty when problem_source is given
  std::string problem_source;  // inline KernelBench-format problem
  std::string candidate;       // candidate file text or a raw model reply
  std::string field;           // where it came from, for error messages ("items[3]")
};

// POST /v1/evaluations and /v1/reward: {"problem"|"problem_source", "candidate"} or
// {"items": [ ... ]}. Returns the items in order.
Result<std::vector<ItemRequest>> ParseItems(const nlohmann::json& body, const ApiLimits& lim);

// A label names a problem: an id ("level1/relu"), or a problem's source when it defines
// `class Model`, or an object {"problem": id} / {"problem_source": text}.
Status ItemFromLabel(const nlohmann::json& label, const std::string& field, ItemRequest* item);

// OpenRLHF's remote reward model: {"query": [...], "prompts": [...], "labels": [...]}. The
// candidate is the query with its prompt removed (the prompt may hold the problem's code).
Result<std::vector<ItemRequest>> ParseOpenRlhf(const nlohmann::json& body, const ApiLimits& lim);
// slime's remote reward model: one sample {"prompt", "response", "label"}.
Result<ItemRequest> ParseSlime(const nlohmann::json& body, const ApiLimits& lim);

// Bodies of answers.
nlohmann::json ViewJson(const std::string& id, const queue::JobView& v);
// The reward of a finished job; nullopt while pending and for infra_error.
std::optional<double> RewardOf(const queue::JobView& v);
// One entry of /v1/reward's "results": id, state, status, reward, and the verdict's summary
// fields (correct trials, speedups, candidate time) plus the full verdict.
nlohmann::json RewardJson(const std::string& id, const queue::JobView& v);
// OpenRLHF's answer: rewards (missing_reward where there is none), scores (the same) and
// extra_logs (per-sample numbers: correct, speedup, infra_error).
nlohmann::json OpenRlhfResponse(const std::vector<queue::JobView>& views, double missing_reward);

// {"error": message}; the JSON of every 4xx/5xx answer.
nlohmann::json ErrorJson(const std::string& message);
// Serialises without throwing on invalid UTF-8 (compiler output may hold any bytes).
std::string Dump(const nlohmann::json& j);

}  // namespace kf::serve
