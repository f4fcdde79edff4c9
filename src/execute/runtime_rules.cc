#include "execute/runtime_rules.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <regex>

#include "common/rules.h"

namespace kf::execute {
bool IsLibraryKernel(std::string_view kernel, const backend::Device* device) {
  const backend::Device& d = device ? *device : *backend::FindDevice("cuda");
  if (d.vendor_kernels.empty()) return false;
  static std::mutex mu;
  static std::map<std::string, std::regex> compiled;  // by device name: compiled once each
  std::regex re;
  {
    std::lock_guard<std::mutex> g(mu);
    auto it = compiled.find(d.name);
    if (it == compiled.end()) {
      it = compiled.emplace(d.name, std::regex(d.vendor_kernels, std::regex::icase)).first;
    }
    re = it->second;
  }
  return std::regex_search(kernel.begin(), kernel.end(), re);
}

namespace {

const backend::Path& PathOr(const backend::Path* p) {
  return p ? *p : *backend::FindPath("cuda", backend::Family::kLoadInline);
}

}  // namespace

ProfileFindings CheckProfile(const nlohmann::json& profile, int own_calls,
                             const ProfileRules& rules) {
  const backend::Path& path = PathOr(rules.path);
  const std::string family = backend::FamilyName(path.family());
  ProfileFindings out;
  auto cheat = [&](const std::string& code, const std::string& msg) {
    Diagnostic d;
    d.stage = "runtime";
    d.code = code;
    d.message = msg;
    d.hint = RuleHint(code, family);
    out.cheats.push_back(d);
  };
  const bool strict = !Allows(rules.policy).pytorch_compute;
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
      if (!k.is_string() || !IsLibraryKernel(k.get<std::string>(), &path.device())) continue;
      if (!libs.empty()) libs += ", ";
      libs += k.get<std::string>().substr(0, 120);
    }
    if (!libs.empty()) {
      cheat("H04", "vendor library kernels ran during ModelNew.forward: " + libs);
    }
  }
  if (own_calls == 0) cheat("H02", path.NeverRanMessage());
  return out;
}

std::optional<Diagnostic> CheckAblation(bool still_correct, const backend::Path& path) {
  if (!still_correct) return std::nullopt;
  Diagnostic d;
  d.stage = "runtime";
  d.code = "H02";
  d.message = path.StillCorrectMessage();
  // load_inline keeps the words its verdicts always had here.
  d.hint = path.family() == backend::Family::kTriton
               ? RuleHint("H02", "triton")
               : "Compute the output in your own kernels, not beside them.";
  return d;
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
