// A finding about a candidate, located in the candidate's own lines where possible.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kf {

enum class Severity { kError, kWarning, kInfo };

struct Diagnostic {
  std::string stage;     // "extract", "static", "build", "execute", "correctness", "timing"
  std::string code;      // stable machine-readable id, e.g. "no_model_new", "H01"
  Severity severity = Severity::kError;
  std::string message;   // one human sentence
  int line = 0;          // 1-based line in the candidate as submitted; 0 = unknown
  int col = 0;           // 1-based; 0 = unknown
  std::string excerpt;   // the offending candidate line(s), if known
  std::string hint;      // what to do about it
};

const char* SeverityName(Severity s);
nlohmann::json ToJson(const Diagnostic& d);
Diagnostic DiagnosticFromJson(const nlohmann::json& j);

}  // namespace kf
