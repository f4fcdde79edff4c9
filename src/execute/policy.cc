#include "execute/policy.h"

#include <fstream>

namespace kf::execute {

const char* PolicyName(Policy p) { return p == Policy::kKernelBench ? "kernelbench" : "strict"; }

std::optional<Policy> ParsePolicy(std::string_view name) {
  if (name == "strict") return Policy::kStrict;
  if (name == "kernelbench") return Policy::kKernelBench;
  return std::nullopt;
}

PolicyAllows Allows(Policy p) {
  PolicyAllows a;
  if (p == Policy::kKernelBench) {
    a.pytorch_compute = true;
    a.cuda_graphs = true;
  }
  return a;
}

Result<std::set<std::string>> ReadAllowlist(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read the allowlist " + path.string());
  std::set<std::string> ops;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    ops.insert(line.substr(first, last - first + 1));
  }
  if (ops.empty()) return Status::Invalid("the allowlist " + path.string() + " names no op");
  return ops;
}

std::filesystem::path DefaultAllowlist(const std::filesystem::path& runner_dir) {
  return runner_dir / "policies" / "strict_allowed_aten.txt";
}

}  // namespace kf::execute
