#include "execute/runtime_rules.h"

#include <regex>
#include <set>

namespace kf::execute {
namespace {

const std::set<std::string_view> kAllowedAten = {
    "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty",
    "aten::new_empty_strided", "aten::new_zeros", "aten::new_ones", "aten::new_full",
    "aten::zeros", "aten::zeros_like", "aten::ones", "aten::ones_like", "aten::full",
    "aten::full_like", "aten::fill_", "aten::zero_", "aten::copy_", "aten::clone",
    "aten::contiguous", "aten::view", "aten::_unsafe_view", "aten::reshape",
    "aten::_reshape_alias", "aten::as_strided", "aten::t", "aten::transpose", "aten::permute",
    "aten::expand", "aten::expand_as", "aten::unsqueeze", "aten::squeeze", "aten::select",
    "aten::slice", "aten::narrow", "aten::detach", "aten::alias", "aten::lift_fresh",
    "aten::to", "aten::_to_copy", "aten::resize_", "aten::flatten", "aten::unflatten",
    "aten::view_as", "aten::resolve_conj", "aten::resolve_neg", "aten::item",
    "aten::_local_scalar_dense", "aten::size", "aten::stride", "aten::numel", "aten::split",
    "aten::chunk", "aten::unbind", "aten::cat", "aten::stack", "aten::arange",
    "aten::scalar_tensor", "aten::result_type"};

}  // namespace

bool IsAllowedAtenOp(std::string_view op) {
  return kAllowedAten.count(op) > 0;
}

bool IsLibraryKernel(std::string_view kernel) {
  static const std::regex kLib(
      R"(cublas|cutlass|cudnn|xmma|nvjet|magma|gemv2T_kernel|gemvNSP|splitKreduce_kernel|(^|[^a-z])(ampere|hopper|volta|turing|sm\d\d)_[a-z0-9]*gemm)",
      std::regex::icase);
  return std::regex_search(kernel.begin(), kernel.end(), kLib);
}

std::vector<Diagnostic> CheckProfile(const nlohmann::json& profile, int extension_calls,
                                     bool allow_libraries) {
  std::vector<Diagnostic> out;
  auto diag = [&](const std::string& code, const std::string& msg, const std::string& hint) {
    Diagnostic d;
    d.stage = "runtime";
    d.code = code;
    d.message = msg;
    d.hint = hint;
    out.push_back(d);
  };
  std::string illegal;
  for (const auto& op : profile.value("aten", nlohmann::json::array())) {
    if (!op.is_string() || IsAllowedAtenOp(op.get<std::string>())) continue;
    if (!illegal.empty()) illegal += ", ";
    illegal += op.get<std::string>();
  }
  if (!illegal.empty()) {
    diag("H01", "PyTorch computed part of the answer during ModelNew.forward: " + illegal,
         "Do all compute in your own kernels; in forward use only allocation, views and copies.");
  }
  if (!allow_libraries) {
    std::string libs;
    for (const auto& k : profile.value("kernels", nlohmann::json::array())) {
      if (!k.is_string() || !IsLibraryKernel(k.get<std::string>())) continue;
      if (!libs.empty()) libs += ", ";
      libs += k.get<std::string>().substr(0, 120);
    }
    if (!libs.empty()) {
      diag("H04", "vendor library kernels ran during ModelNew.forward: " + libs,
           "cuBLAS, cuDNN and CUTLASS are not allowed for this job; write the kernel yourself.");
    }
  }
  if (extension_calls == 0) {
    diag("H02", "ModelNew.forward never called a function of the candidate's own extension",
         "The answer must come from the kernels you built with load_inline.");
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
      d.hint = "Make the kernel work for every input; a guard may stay, but its except or "
               "finally branch must never run during a call.";
      return d;
    }
  }
  return std::nullopt;
}

}  // namespace kf::execute
