// groups: POST /v1/groups, GRPO-style groups (G samples answering one prompt) in, per-sample
// rewards and each group's statistics out (docs/API.md, "Groups"). The documents and the
// statistics, apart from HTTP so they can be tested alone. Parsers never throw; an error names
// the offending field. One bad group or sample fails itself alone (docs/API.md, "One bad sample
// fails one sample"): only a malformed envelope refuses the request.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "queue/job.h"
#include "serve/api.h"

namespace kf::serve {

// What a trainer may attach to a group so a replayed prompt can be sent again (BDR).
inline constexpr size_t kMaxPromptBytes = 1 << 20;
inline constexpr size_t kMaxMetadataBytes = 64 << 10;

struct GroupRequest {
  std::string field;                    // "groups[2]", or "body" for the single-group form
  // What is wrong with the group itself (its problem, prompt or metadata, or its candidates not
  // a non-empty list), naming the field: every candidate it has is refused with it, and a group
  // whose candidates are no list has none (its rewards are []).
  std::optional<Status> fault;
  std::string problem;                  // a registered id; empty when problem_source is given
  std::string problem_source;           // a problem's text (needs --allow-inline-problems)
  std::vector<std::string> candidates;  // the G samples: candidate files or raw model replies
  // One per candidate: set where that sample alone is bad (not a string: refused; over the
  // candidate limit: a format_error, as on /v1/reward). Its candidate is then "".
  std::vector<std::optional<SampleFault>> faults;
  std::string prompt;                   // the prompt they answered; "" when not sent
  nlohmann::json metadata;              // a JSON object, or null when not sent
  std::string group_id;                 // the trainer's name for it; "" when not sent
};

// {"groups": [group, ...]} or one group's fields at the top level. A group is
// {"problem"|"problem_source", "candidates": [...], "prompt"?, "metadata"?, "group_id"?}; at
// most lim.max_items candidates in the whole body. An error is for the envelope alone (the body
// not an object, `groups` not a non-empty list, too many candidates); a bad group or candidate
// is kept with its fault.
Result<std::vector<GroupRequest>> ParseGroups(const nlohmann::json& body, const ApiLimits& lim);

// The candidates of every group as items, in order (groups[0]'s first, ...). Each item's field
// names its candidate ("groups[1].candidates[3]"); an item carries its candidate's fault, or its
// group's (refused).
std::vector<ItemRequest> GroupItems(const std::vector<GroupRequest>& groups);

// One sample as the statistics see it.
struct SampleOutcome {
  std::optional<double> reward;  // none: infra_error, lost, or not finished by the deadline
  bool passed = false;           // status ok: correct and legal
};
SampleOutcome OutcomeOf(const queue::JobView& v);

// What trainers compute from a group (verl's GRPO and OpenRLHF's group normalisation both take
// the Bessel-corrected std of torch.std, and divide by std + 1e-6).
inline constexpr double kAdvantageEps = 1e-6;
struct GroupStats {
  size_t n = 0;           // samples
  size_t rewarded = 0;    // samples with a reward
  size_t pass_count = 0;  // samples whose status is ok
  // Over the rewarded samples; none when no sample has a reward. std is the sample standard
  // deviation (divisor rewarded - 1), 0 for a single reward.
  std::optional<double> mean, std, min, max;
  // (reward - mean) / (std + kAdvantageEps) per sample; none where the sample has no reward.
  // Equal rewards (std 0) give 0 each.
  std::vector<std::optional<double>> advantages;
  // Every sample has a reward and none passed (each status one of format_error, compile_error,
  // runtime_error, timeout, incorrect, cheat). A group with a sample missing its reward is never
  // all-failed: the missing one might have passed. This is what BDR keeps.
  bool all_failed = false;
};
GroupStats ComputeGroupStats(const std::vector<SampleOutcome>& samples);

// {"n", "rewarded", "pass_count", "mean", "std", "min", "max"} (null where none).
nlohmann::json GroupStatsJson(const GroupStats& s);

}  // namespace kf::serve
