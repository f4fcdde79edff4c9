// Runtime legality: decisions on what the candidate process observed during one profiled
// forward call. The observations come from the untrusted process; the rules live here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/diagnostic.h"

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

}  // namespace kf::execute
