// Runtime legality: decisions on what the candidate process observed during one profiled
// forward call. The observations come from the untrusted process; the rules live here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostic.h"
#include "extract/guards.h"

namespace kf::execute {

// Aten ops a candidate's forward may run at the outermost level: allocation, views, copies
// and metadata. Anything else is PyTorch doing the work (H01, or H04 when the candidate's C++
// called it).
bool IsAllowedAtenOp(std::string_view op);

// GPU kernels that belong to vendor libraries (cuBLAS, cuDNN, CUTLASS).
bool IsLibraryKernel(std::string_view kernel);

// `profile` is the candidate's report {"aten": [...], "kernels": [...]}; `extension_calls` how
// often the candidate's own extension functions were called during that forward.
std::vector<Diagnostic> CheckProfile(const nlohmann::json& profile, int extension_calls,
                                     bool allow_libraries);

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
