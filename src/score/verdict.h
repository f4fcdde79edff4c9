// The verdict: the one result of evaluating one candidate. Its JSON form is a stable,
// versioned schema (docs/VERDICT.md); bump kVerdictSchema on any incompatible change.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.h"

namespace kf {

inline constexpr int kVerdictSchema = 1;

enum class VerdictStatus {
  kOk,
  kFormatError,
  kCompileError,
  kRuntimeError,
  kTimeout,
  kIncorrect,
  kCheat,
  kInfraError,
};

const char* StatusName(VerdictStatus s);
bool StatusFromName(const std::string& name, VerdictStatus* out);

struct StageRecord {
  std::string name;  // "extract", "build", "execute", "correctness", "timing", "score"
  bool ok = false;
  double ms = 0;
  nlohmann::json detail = nlohmann::json::object();  // stage-specific facts (cache_hit, ...)
};

struct TimingSummary {
  double median_ms = 0;
  double p10_ms = 0;
  double p90_ms = 0;
  int n = 0;
};

// A 95% interval of a speedup (execute::RatioInterval over interleaved samples).
struct SpeedupInterval {
  double lo = 0;
  double hi = 0;
};

struct Verdict {
  std::string problem_id;
  std::string problem_hash;
  std::string candidate_hash;
  std::string candidate_format = "kernelbench";
  std::string backend;
  std::string device;
  // The acceptance rule ("strict" or "kernelbench", execute/policy.h) and, under kernelbench,
  // the PyTorch compute ops that ran beside the candidate's kernels in its forward.
  std::string policy = "strict";
  std::vector<std::string> pytorch_ops;
  VerdictStatus status = VerdictStatus::kInfraError;
  std::vector<StageRecord> stages;
  int trials_passed = 0;
  int trials_total = 0;
  std::optional<TimingSummary> candidate_ms;
  std::optional<double> eager_ms;
  std::optional<double> compile_ms;
  std::string compile_unavailable;  // why there is no torch.compile time, when there is none
  std::optional<double> speedup_vs_eager;
  std::optional<double> speedup_vs_compile;
  // Absent when the reference was not timed beside the candidate (or too few calls were).
  std::optional<SpeedupInterval> speedup_vs_eager_ci;
  std::optional<SpeedupInterval> speedup_vs_compile_ci;
  std::optional<double> reward;  // absent for infra_error
  std::vector<Diagnostic> diagnostics;
  std::string feedback;
};

nlohmann::json ToJson(const Verdict& v);
bool VerdictFromJson(const nlohmann::json& j, Verdict* v, std::string* error);

}  // namespace kf
