#include "common/diagnostic.h"

namespace kf {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kInfo: return "info";
  }
  return "error";
}

nlohmann::json ToJson(const Diagnostic& d) {
  nlohmann::json j = {{"stage", d.stage},       {"code", d.code}, {"severity", SeverityName(d.severity)},
                      {"message", d.message},   {"line", d.line}, {"col", d.col},
                      {"excerpt", d.excerpt},   {"hint", d.hint}};
  return j;
}

Diagnostic DiagnosticFromJson(const nlohmann::json& j) {
  Diagnostic d;
  d.stage = j.value("stage", "");
  d.code = j.value("code", "");
  std::string sev = j.value("severity", "error");
  d.severity = sev == "warning" ? Severity::kWarning : sev == "info" ? Severity::kInfo : Severity::kError;
  d.message = j.value("message", "");
  d.line = j.value("line", 0);
  d.col = j.value("col", 0);
  d.excerpt = j.value("excerpt", "");
  d.hint = j.value("hint", "");
  return d;
}

}  // namespace kf
