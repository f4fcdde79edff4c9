// Runtime legality: decisions on what the candidate process observed during one profiled
// forward call. The observations come from the untrusted process; the rules live here.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostic.h"
#include "execute/policy.h"
#include "extract/guards.h"

namespace kf::execute {

// GPU kernels that belong to vendor libraries (cuBLAS, cuDNN, CUTLASS).
bool IsLibraryKernel(std::string_view kernel);

struct ProfileRules {
  Policy policy = Policy::kStrict;
  // Plumbing ATen ops (allocation, views, copies, metadata: the allowlist file); any other op
  // at the outermost level is PyTorch computing. Not owned; must outlive the call.
  const std::set<std::string>* allowed_aten = nullptr;
  bool allow_libraries = false;
};

struct ProfileFindings {
  std::vector<Diagnostic> cheats;        // H01 (strict), H04 (strict, libraries off), H02
  std::vector<std::string> pytorch_ops;  // compute ops outside the allowlist, first seen first
};

// `profile` is the candidate's report {"aten": [...], "kernels": [...]}; `extension_calls` how
// often the candidate's own extension functions were called during that forward. Under strict,
// PyTorch compute is H01 and vendor library kernels H04 unless allowed; under kernelbench both
// are allowed (PyTorch's own convolutions run cuDNN) and the compute ops are only listed. An
// extension never called is H02 under both.
ProfileFindings CheckProfile(const nlohmann::json& profile, int extension_calls,
                             const ProfileRules& rules);

// H03 from what ran: `evidence` is the host's report for one call, {"lines": [...], "raised":
// bool}: which watched lines (those of `guards`) executed, and whether an exception passed
// through a frame of the candidate's code. An except line that ran means a fallback answered;
// a finally line counts only after an exception, since finally runs on the normal path too
// (it swallowed the failure: the call returned). `during` names the call ("trial 3").
// Returns the cheat diagnostic (line: the guard's header, a code line), or nothing.
std::optional<Diagnostic> CheckGuards(const nlohmann::json& evidence,
                                      const std::vector<extract::GuardBlock>& guards,
                                      const std::string& during);

}  // namespace kf::execute
