#include "common/extension_spec.h"

namespace kf {
namespace {

bool StringList(const nlohmann::json& j, const char* field, std::vector<std::string>* out,
                std::string* error) {
  out->clear();
  if (!j.contains(field) || j[field].is_null()) return true;
  const auto& v = j[field];
  if (v.is_string()) {
    out->push_back(v.get<std::string>());
    return true;
  }
  if (!v.is_array()) {
    *error = std::string(field) + " must be a string or a list of strings";
    return false;
  }
  for (const auto& e : v) {
    if (!e.is_string()) {
      *error = std::string(field) + " must contain only strings";
      return false;
    }
    out->push_back(e.get<std::string>());
  }
  return true;
}

}  // namespace

nlohmann::json CanonicalJson(const ExtensionSpec& s) {
  nlohmann::json j;  // nlohmann's default object is a std::map: keys come out sorted
  j["name"] = s.name;
  j["cpp_sources"] = s.cpp_sources;
  j["cuda_sources"] = s.cuda_sources;
  j["functions"] = s.functions;
  j["extra_cflags"] = s.extra_cflags;
  j["extra_cuda_cflags"] = s.extra_cuda_cflags;
  j["extra_ldflags"] = s.extra_ldflags;
  j["extra_include_paths"] = s.extra_include_paths;
  j["with_cuda"] = s.with_cuda ? nlohmann::json(*s.with_cuda) : nlohmann::json();
  j["with_pytorch_error_handling"] = s.with_pytorch_error_handling;
  return j;
}

bool SpecFromJson(const nlohmann::json& j, ExtensionSpec* s, std::string* error) {
  if (!j.is_object()) {
    *error = "load_inline arguments must be an object";
    return false;
  }
  if (!j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty()) {
    *error = "name must be a non-empty string";
    return false;
  }
  s->name = j["name"].get<std::string>();
  if (!StringList(j, "cpp_sources", &s->cpp_sources, error) ||
      !StringList(j, "cuda_sources", &s->cuda_sources, error) ||
      !StringList(j, "extra_cflags", &s->extra_cflags, error) ||
      !StringList(j, "extra_cuda_cflags", &s->extra_cuda_cflags, error) ||
      !StringList(j, "extra_ldflags", &s->extra_ldflags, error) ||
      !StringList(j, "extra_include_paths", &s->extra_include_paths, error)) {
    return false;
  }
  s->functions = nullptr;
  if (j.contains("functions") && !j["functions"].is_null()) {
    const auto& f = j["functions"];
    if (f.is_string()) {
      s->functions = nlohmann::json::array({f});
    } else if (f.is_array()) {
      for (const auto& e : f) {
        if (!e.is_string()) {
          *error = "functions must contain only strings";
          return false;
        }
      }
      s->functions = f;
    } else if (f.is_object()) {
      for (const auto& [k, v] : f.items()) {
        if (!v.is_string()) {
          *error = "functions docstrings must be strings (function " + k + ")";
          return false;
        }
      }
      s->functions = f;
    } else {
      *error = "functions must be a string, a list or a dict";
      return false;
    }
  }
  s->with_cuda.reset();
  if (j.contains("with_cuda") && !j["with_cuda"].is_null()) {
    if (!j["with_cuda"].is_boolean()) {
      *error = "with_cuda must be a bool or None";
      return false;
    }
    s->with_cuda = j["with_cuda"].get<bool>();
  }
  s->with_pytorch_error_handling = true;
  if (j.contains("with_pytorch_error_handling") && j["with_pytorch_error_handling"].is_boolean()) {
    s->with_pytorch_error_handling = j["with_pytorch_error_handling"].get<bool>();
  }
  return true;
}

}  // namespace kf
