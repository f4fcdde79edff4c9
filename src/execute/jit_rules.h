// Run-time facts of candidates whose kernels compile inside their own process (Triton), and
// the decisions on them: whether the host could hook the kernels' launches (without that,
// neither the launch count nor the ghost replay means anything), how long compiling took (the
// verdict's build stage), and a compile error as a diagnostic at the candidate's line. The
// host only reports (runner/kforge_runner/triton_hooks.py); the rules live here. Internal to
// execute.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/diagnostic.h"

namespace kf::execute {

struct JitStats {
  int compiles = 0;       // kernels compiled (or loaded from the cache) in the process
  double compile_ms = 0;  // time inside Triton's compiler
  int launches = 0;       // launches of the candidate's kernels seen by the hooks
};

// Folds the host's cumulative "jit" report of a load or call reply ({"compiles", "compile_ms",
// "launches"}) into *s: the counters only grow, so the largest values seen are the run's.
void AddJitReport(const nlohmann::json& reply, JitStats* s);

// The load reply's "jit" facts ({"hooks": ["launch", ...], "version": ...}): why the run cannot
// be judged (an infra_error: this machine's Triton is one kforge cannot watch), or nothing.
std::optional<std::string> MissingLaunchHooks(const nlohmann::json& load_reply);

// A compile error the host reported ({"kind": "jit_compile_error", "kernel": the launched
// kernel, "message": Triton's text}) as a build diagnostic at its line of `code` (0 when the
// message locates nothing), code "compile_error".
Diagnostic JitCompileDiagnostic(const nlohmann::json& reply, const std::string& code);

}  // namespace kf::execute
