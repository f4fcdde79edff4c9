#include "eval/decide.h"

namespace kf::eval {

VerdictStatus FromOutcome(execute::Outcome o) {
  switch (o) {
    case execute::Outcome::kOk:
      return VerdictStatus::kOk;
    case execute::Outcome::kFormatError:
      return VerdictStatus::kFormatError;
    case execute::Outcome::kCompileError:
      return VerdictStatus::kCompileError;
    case execute::Outcome::kRuntimeError:
      return VerdictStatus::kRuntimeError;
    case execute::Outcome::kTimeout:
      return VerdictStatus::kTimeout;
    case execute::Outcome::kIncorrect:
      return VerdictStatus::kIncorrect;
    case execute::Outcome::kCheat:
      return VerdictStatus::kCheat;
    case execute::Outcome::kInfraError:
      return VerdictStatus::kInfraError;
  }
  return VerdictStatus::kInfraError;
}

VerdictStatus RunStatus(execute::Outcome outcome, bool build_failed, bool environment_fault) {
  if (environment_fault) return VerdictStatus::kInfraError;
  if (build_failed) return VerdictStatus::kCompileError;
  return FromOutcome(outcome);
}

bool LaneDeathExplains(execute::Outcome outcome) {
  return outcome == execute::Outcome::kRuntimeError || outcome == execute::Outcome::kTimeout ||
         outcome == execute::Outcome::kInfraError;
}

std::optional<VerdictStatus> StaticBuildStatus(const StaticBuilds& b) {
  if (b.infra || b.environment) return VerdictStatus::kInfraError;
  if (b.failed) return VerdictStatus::kCompileError;
  return std::nullopt;
}

bool ShouldStore(VerdictStatus status, const std::string& key) {
  return status != VerdictStatus::kInfraError && !key.empty();
}

namespace {

// An infra_error carrying a diagnostic of `code`.
bool InfraErrorWith(const Verdict& v, const char* code) {
  if (v.status != VerdictStatus::kInfraError) return false;
  for (const auto& d : v.diagnostics) {
    if (d.code == code) return true;
  }
  return false;
}

}  // namespace

bool SpoiledByLoad(const Verdict& v) { return InfraErrorWith(v, execute::kBusyCode); }

bool LaneDied(const Verdict& v) { return InfraErrorWith(v, execute::kLaneDiedCode); }

bool MeasureBaselinesAgain(const Result<execute::BaselineResult>& last, int retries_done) {
  return retries_done < kBaselineRetries && last.ok() && !last->disturbed.empty();
}

bool StoreBaselines(const execute::BaselineResult& b, bool interleaved) {
  if (!b.disturbed.empty()) return false;
  return !interleaved || b.eager.has_value();
}

bool NeedsReverify(const Verdict& v, double reverify_speedup) {
  return v.candidate_ms && v.eager_ms && *v.eager_ms / v.candidate_ms->median_ms > reverify_speedup;
}

Reverified JudgeReverify(const execute::ExecResult& again, double first_median_ms) {
  if (again.outcome != execute::Outcome::kOk) return Reverified::kFailed;
  if (again.timing && again.timing->summary.median_ms > first_median_ms) {
    return Reverified::kSlowerCounts;
  }
  return Reverified::kFirstCounts;
}

}  // namespace kf::eval
