// api: the reward service's request and response documents (docs/API.md), apart from HTTP so
// they can be tested alone. Parsers never throw; an error names the offending field.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "queue/job.h"
#include "serve/split.h"

namespace kf::serve {

// Limits that keep one request from taking the service down; each is checked while parsing.
struct ApiLimits {
  size_t max_items = 4096;               // per batch
  size_t max_candidate_bytes = 1 << 20;  // 1 MiB: far above any real kernel
  size_t max_problem_bytes = 1 << 20;
};

// Why one sample of a batch is answered without an evaluation while the others are evaluated
// ("one bad sample fails one sample"; docs/API.md, "Errors"). Found while reading the request or
// making the sample's job.
struct SampleFault {
  enum class Kind {
    // The request's part of the sample is wrong: an unknown problem, a label or candidate
    // missing or of the wrong type, a problem's text this service refuses. No reward, as for
    // infra_error: the model is not to blame.
    kRefused,
    // The model's answer is over the candidate limit: a format_error verdict (reward -1), as for
    // a reply without code; nothing is evaluated.
    kTooLong,
  };
  Kind kind;
  Status why;  // names the field; a request whose every sample is refused is answered with it
};

// One evaluation asked for: a registered problem by id, or a problem's source sent inline.
struct ItemRequest {
  std::string problem;         // "level1/relu"; empty when problem_source is given
  std::string problem_source;  // inline KernelBench-format problem
  std::string candidate;       // candidate file text or a raw model reply
  std::string field;           // where it came from, for error messages ("items[3]")
  // OpenRLHF and slime: where the answer was found in the text sent (split.h); `candidate` is
  // that span. When it was not found the item is answered without an evaluation (NoAnswer).
  std::optional<Span> span;
  std::optional<SampleFault> fault;  // set: this sample is not evaluated (then `candidate` is "")
};

// An answer over lim.max_candidate_bytes: the model's fault (kTooLong), its message naming
// `what` ("field 'items[2].candidate'") and both sizes.
SampleFault TooLong(const std::string& what, size_t bytes, const ApiLimits& lim);

// The sample's job runs: no fault, and its answer (OpenRLHF, slime) was found.
bool Evaluates(const ItemRequest& item);
// Routes that answer each sample (/v1/reward, /get_reward, /slime/reward): the first refusal
// when every item is refused, so a request with nothing to evaluate is refused whole; else Ok.
Status AllRefused(const std::vector<ItemRequest>& items);
// Routes that refuse a request for any bad item (/v1/evaluations, whose answer is ids to poll):
// the first item's fault, or Ok.
Status AnyFault(const std::vector<ItemRequest>& items);

// POST /v1/evaluations and /v1/reward: {"problem"|"problem_source", "candidate"} or
// {"items": [ ... ]}. Returns the items in order; an item that is wrong or over a limit carries
// its fault. An error is for the body itself (not an object, `items` not a non-empty list).
Result<std::vector<ItemRequest>> ParseItems(const nlohmann::json& body, const ApiLimits& lim);

// A label names a problem: an id ("level1/relu"), or a problem's source when it defines
// `class Model`, or an object {"problem": id} / {"problem_source": text}.
Status ItemFromLabel(const nlohmann::json& label, const std::string& field, ItemRequest* item);

// OpenRLHF's remote reward model: {"query": [...], "prompts": [...], "labels": [...]}. The
// candidate is the answer that SplitQuery finds in the query (never the prompt, which may hold
// the problem's code or an earlier program). A sample whose query, prompt or label is of the
// wrong type, or whose answer is over the limit, carries its fault; an error is for the body
// (a list missing or not a list, lists of different lengths, too many samples).
Result<std::vector<ItemRequest>> ParseOpenRlhf(const nlohmann::json& body, const ApiLimits& lim);
// slime's remote reward model: one sample {"prompt", "response", "label"}; the candidate is
// SplitResponse's answer in the response (an answer over the limit is the item's fault).
Result<ItemRequest> ParseSlime(const nlohmann::json& body, const ApiLimits& lim);

// The answer of an item whose response could not be told from its prompt: a format_error
// verdict (reward -1, as for a reply without code) that says why; nothing is evaluated.
queue::JobView NoAnswer(const queue::JobSpec& job, const Span& span);
// The answer of an item that is not evaluated (!Evaluates(item)): NoAnswer; for an answer over
// the limit a format_error verdict (diagnostic answer_too_long) that says so; for a refused item
// no result (no reward). `job` is the item's, and empty for a refused one.
queue::JobView Unevaluated(const queue::JobSpec& job, const ItemRequest& item);
// Why an item is not evaluated (the fault's message, or why no answer was found); "" if it is.
std::string WhyUnevaluated(const ItemRequest& item);

// A number of seconds from a query parameter or a body field: finite and >= 0, or an error
// naming `field`. Text such as "abc", "nan" or "inf" is refused, not read as 0 or forever.
Result<double> ParseSeconds(const std::string& text, const std::string& field);
// The body's `key` if present (then it must be such a number), else nullopt.
Result<std::optional<double>> SecondsField(const nlohmann::json& body, const std::string& key);

// Bodies of answers.
nlohmann::json ViewJson(const std::string& id, const queue::JobView& v);
// The reward of a finished job; nullopt while pending and for infra_error.
std::optional<double> RewardOf(const queue::JobView& v);
// One entry of /v1/reward's "results": id, state, status, reward, and the verdict's summary
// fields (correct trials, speedups, candidate time) plus the full verdict.
nlohmann::json RewardJson(const std::string& id, const queue::JobView& v);
// RewardJson of an item's view; for an item not evaluated, id null and "error" saying why, and a
// refused one has state "refused", status and reward null, and no verdict.
nlohmann::json ItemResultJson(const std::string& id, const queue::JobView& v,
                              const ItemRequest& item);
// OpenRLHF's answer: rewards (missing_reward where there is none), scores (the same),
// extra_logs (per-sample numbers, as OpenRLHF logs them: correct, speedup, no_reward, refused,
// answer_too_long, and where the answer was found: split_after_prompt, split_after_marker,
// split_failed, answer_offset_bytes, answer_bytes), spans (SpanJson of each sample) and errors
// (WhyUnevaluated of each sample, null where it was evaluated); OpenRLHF ignores the last two.
nlohmann::json OpenRlhfResponse(const std::vector<queue::JobView>& views,
                                const std::vector<ItemRequest>& items, double missing_reward);

// {"error": message}; the JSON of every 4xx/5xx answer.
nlohmann::json ErrorJson(const std::string& message);
// Serialises without throwing on invalid UTF-8 (compiler output may hold any bytes).
std::string Dump(const nlohmann::json& j);

}  // namespace kf::serve
