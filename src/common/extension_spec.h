// The arguments of one torch.utils.cpp_extension.load_inline call, as data.
// Produced by static analysis of a candidate (extract) or sent by the candidate process at
// run time (the dynamic fallback); consumed by the build stage. Both paths go through
// CanonicalJson so the same call always gets the same cache key.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kf {

struct ExtensionSpec {
  std::string name;
  std::vector<std::string> cpp_sources;
  std::vector<std::string> cuda_sources;
  nlohmann::json functions;  // null, a list of names, or an object name -> docstring
  std::vector<std::string> extra_cflags;
  std::vector<std::string> extra_cuda_cflags;
  std::vector<std::string> extra_ldflags;
  std::vector<std::string> extra_include_paths;
  std::optional<bool> with_cuda;
  bool with_pytorch_error_handling = true;
};

// Sorted-key JSON with every field present; the identity of the call.
nlohmann::json CanonicalJson(const ExtensionSpec& spec);
// Accepts the shapes load_inline accepts (a string or a list for sources and flags; a string,
// list or dict for functions). Fails with a message naming the field.
bool SpecFromJson(const nlohmann::json& j, ExtensionSpec* spec, std::string* error);

}  // namespace kf
