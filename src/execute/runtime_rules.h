// Runtime legality: decisions on what the candidate process observed during one profiled
// forward call. The observations come from the untrusted process; the rules live here.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "common/diagnostic.h"
#include "execute/policy.h"
#include "extract/guards.h"

namespace kf::execute {

// Device kernels that belong to vendor libraries (on cuda: cuBLAS, cuDNN, CUTLASS): the
// device's backend::Device::vendor_kernels; null is cuda's.
bool IsLibraryKernel(std::string_view kernel, const backend::Device* device = nullptr);

struct ProfileRules {
  Policy policy = Policy::kStrict;
  // Plumbing ATen ops (allocation, views, copies, metadata: the allowlist file); any other op
  // at the outermost level is PyTorch computing. Not owned; must outlive the call.
  const std::set<std::string>* allowed_aten = nullptr;
  bool allow_libraries = false;
  // The candidate's family on the lane's device: its vendor kernel names and the words of H02.
  // Null: load_inline on cuda.
  const backend::Path* path = nullptr;
};

struct ProfileFindings {
  std::vector<Diagnostic> cheats;        // H01 (strict), H04 (strict, libraries off), H02
  std::vector<std::string> pytorch_ops;  // compute ops outside the allowlist, first seen first
};

// `profile` is the candidate's report {"aten": [...], "kernels": [...]}; `own_calls` how often
// the candidate's own kernels ran during that forward (its extension's functions called, its
// Triton kernels launched: the reply field rules.path names). Under strict,
// PyTorch compute is H01 and vendor library kernels H04 unless allowed; under kernelbench both
// are allowed (PyTorch's own convolutions run cuDNN) and the compute ops are only listed. An
// extension never called is H02 under both.
ProfileFindings CheckProfile(const nlohmann::json& profile, int own_calls,
                             const ProfileRules& rules);

// The ablation call (load_inline: the extension made a no-op) or the ghost replay (Triton:
// every launch made a no-op): the candidate called once more without its kernels. When the
// judge still found the answer right (`still_correct`), its kernels did not compute it: H02.
std::optional<Diagnostic> CheckAblation(bool still_correct, const backend::Path& path);

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
