#include "execute/runtime_rules.h"

#include <algorithm>
#include <regex>

#include "common/rules.h"

namespace kf::execute {
bool IsLibraryKernel(std::string_view kernel) {
  static const std::regex kLib(
      R"(cublas|cutlass|cudnn|xmma|nvjet|magma|gemv2T_kernel|gemvNSP|splitKreduce_kernel|(^|[^a-z])(ampere|hopper|volta|turing|sm\d\d)_[a-z0-9]*gemm)",
      std::regex::icase);
  return std::regex_search(kernel.begin(), kernel.end(), kLib);
}

ProfileFindings CheckProfile(const nlohmann::json& profile, int extension_calls,
                             const ProfileRules& rules) {
  ProfileFindings out;
  auto cheat = [&](const std::string& code, const std::string& msg) {
    Diagnostic d;
    d.stage = "runtime";
    d.code = code;
    d.message = msg;
    d.hint = RuleHint(code);
    out.cheats.push_back(d);
  };
  const bool strict = rules.policy == Policy::kStrict;
  for (const auto& op : profile.value("aten", nlohmann::json::array())) {
    if (!op.is_string()) continue;
    const std::string name = op.get<std::string>();
    if (rules.allowed_aten && rules.allowed_aten->count(name)) continue;
    if (std::find(out.pytorch_ops.begin(), out.pytorch_ops.end(), name) == out.pytorch_ops.end()) {
      out.pytorch_ops.push_back(name);
    }
  }
  if (strict && !out.pytorch_ops.empty()) {
    std::string ops;
    for (const auto& op : out.pytorch_ops) ops += (ops.empty() ? "" : ", ") + op;
    cheat("H01", "PyTorch computed part of the answer during ModelNew.forward: " + ops);
  }
  if (strict && !rules.allow_libraries) {
    std::string libs;
    for (const auto& k : profile.value("kernels", nlohmann::json::array())) {
      if (!k.is_string() || !IsLibraryKernel(k.get<std::string>())) continue;
      if (!libs.empty()) libs += ", ";
      libs += k.get<std::string>().substr(0, 120);
    }
    if (!libs.empty()) {
      cheat("H04", "vendor library kernels ran during ModelNew.forward: " + libs);
    }
  }
  if (extension_calls == 0) {
    cheat("H02", "ModelNew.forward never called a function of the candidate's own extension");
  }
  return out;
}

std::optional<Diagnostic> CheckGuards(const nlohmann::json& evidence,
                                      const std::vector<extract::GuardBlock>& guards,
                                      const std::string& during) {
  if (!evidence.is_object()) return std::nullopt;
  const bool raised = evidence.value("raised", false) == true;
  for (const auto& l : evidence.value("lines", nlohmann::json::array())) {
    if (!l.is_number_integer()) continue;
    const int line = l.get<int>();
    for (const extract::GuardBlock& g : guards) {
      if (line < g.header_line || line > g.last_line || (g.is_finally && !raised)) continue;
      Diagnostic d;
      d.stage = "runtime";
      d.code = "H03";
      d.line = g.header_line;
      d.message = g.is_finally
                      ? "the finally block at line " + std::to_string(g.header_line) +
                            " ran after an exception during " + during +
                            " and the call still returned: it swallowed the failure"
                      : "the except branch at line " + std::to_string(g.header_line) +
                            " ran during " + during + " (line " + std::to_string(line) +
                            "): a fallback computed the answer";
      d.hint = RuleHint("H03");
      return d;
    }
  }
  return std::nullopt;
}

}  // namespace kf::execute
