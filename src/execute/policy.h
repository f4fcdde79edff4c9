// policy: which acceptance rule a verdict is reached under (docs/PROTOCOL.md, "Policies").
//   strict       MooreEval's: outside the candidate's own kernels only allowlisted plumbing
//                ATen ops may run in forward (anything else is cheat H01).
//   kernelbench  KernelBench's: PyTorch may compute parts of the model beside the candidate's
//                kernels; the verdict lists which compute ops ran. CUDA graphs that the kernel
//                sources build and launch are allowed and judged by what runs (noted as
//                H07_graph). Every trick of docs/RULES.md is still cheat (a decoy kernel beside
//                PyTorch doing all the work is H02).
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"

namespace kf::execute {

enum class Policy { kStrict, kKernelBench };

const char* PolicyName(Policy p);
std::optional<Policy> ParsePolicy(std::string_view name);

// What a policy allows that strict does not, in one place: the static findings (eval's
// StaticFindings) and the runtime rules read this instead of comparing policies.
struct PolicyAllows {
  // PyTorch compute beside a real kernel, from forward (H01) or from the kernel sources (H04):
  // listed (notes, pytorch_ops), not cheat.
  bool pytorch_compute = false;
  // CUDA graphs that the kernel sources build and launch (H07's graph family): the note
  // H07_graph, and the runtime checks decide. Python's graph APIs stay H07 (docs/RULES.md).
  bool cuda_graphs = false;
};
PolicyAllows Allows(Policy p);

// The ATen ops of an allowlist file: one per line, '#' comments and blank lines skipped.
Result<std::set<std::string>> ReadAllowlist(const std::filesystem::path& path);
// The allowlist kforge ships: runner/policies/strict_allowed_aten.txt under `runner_dir`.
std::filesystem::path DefaultAllowlist(const std::filesystem::path& runner_dir);

}  // namespace kf::execute
