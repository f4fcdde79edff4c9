#include "bench/feasibility.h"

#include <algorithm>
#include <cctype>

namespace kf::bench {
namespace {

const StageRecord* StageOf(const Verdict& v, const std::string& name) {
  for (const auto& s : v.stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool MentionsOutOfMemory(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text.find("out of memory") != std::string::npos ||
         text.find("outofmemoryerror") != std::string::npos ||
         text.find("memory budget") != std::string::npos;
}

}  // namespace

FeasibilityRow FeasibilityOf(const Verdict& v) {
  FeasibilityRow r;
  r.problem = v.problem_id;
  r.problem_hash = v.problem_hash;
  r.status = StatusName(v.status);
  r.fits = v.status == VerdictStatus::kOk;
  if (const auto* e = StageOf(v, "execute")) {
    r.judge_peak_bytes = e->detail.value("judge_peak_bytes", int64_t{0});
    r.candidate_peak_bytes = e->detail.value("candidate_peak_bytes", int64_t{0});
  }
  r.trials = v.trials_total;
  if (const auto* c = StageOf(v, "correctness"); c && v.trials_total > 0) {
    r.ms_per_trial = c->ms / v.trials_total;
  }
  if (v.candidate_ms) r.timed_call_ms = v.candidate_ms->median_ms;
  if (const auto* t = StageOf(v, "timing")) r.input_sets = t->detail.value("input_sets", 0);
  for (const auto& d : v.diagnostics) {
    if (MentionsOutOfMemory(d.message)) r.out_of_memory = true;
    if (!r.fits && r.message.empty() && d.severity == Severity::kError) r.message = d.message;
  }
  if (!r.fits && r.message.empty() && !v.diagnostics.empty()) r.message = v.diagnostics[0].message;
  return r;
}

nlohmann::json ToJson(const FeasibilityRow& r) {
  return {{"problem", r.problem},
          {"problem_hash", r.problem_hash},
          {"status", r.status},
          {"fits", r.fits},
          {"out_of_memory", r.out_of_memory},
          {"judge_peak_bytes", r.judge_peak_bytes},
          {"candidate_peak_bytes", r.candidate_peak_bytes},
          {"trials", r.trials},
          {"ms_per_trial", r.ms_per_trial},
          {"timed_call_ms", r.timed_call_ms},
          {"input_sets", r.input_sets},
          {"message", r.message}};
}

}  // namespace kf::bench
