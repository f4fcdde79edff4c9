// feasibility: whether a problem can be evaluated on this machine, read off the verdict of its
// own reference standing in for the candidate (`kforge feasibility`): the whole protocol ran,
// how much device memory the judge and the candidate process took, and how long a trial and a
// timed call took.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "score/verdict.h"

namespace kf::bench {

struct FeasibilityRow {
  std::string problem;       // the verdict's problem id
  std::string problem_hash;
  std::string status;        // the verdict's status
  bool fits = false;         // status ok: every stage ran within the device's memory
  bool out_of_memory = false;  // a diagnostic reports running out of memory
  int64_t judge_peak_bytes = 0;
  int64_t candidate_peak_bytes = 0;
  int trials = 0;
  double ms_per_trial = 0;     // correctness stage time over its trials
  double timed_call_ms = 0;    // median of the timed calls (0 when not timed)
  int input_sets = 0;          // the timing rotation's size
  std::string message;         // the first error diagnostic, when it did not fit
};

FeasibilityRow FeasibilityOf(const Verdict& v);
nlohmann::json ToJson(const FeasibilityRow& r);

}  // namespace kf::bench
