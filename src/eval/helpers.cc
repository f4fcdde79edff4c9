#include <sstream>

#include "eval/impl.h"

namespace kf::eval {
namespace fs = std::filesystem;

std::string LineOf(const std::string& text, int line) {
  std::istringstream in(text);
  std::string s;
  for (int i = 1; std::getline(in, s); ++i) {
    if (i == line) return s;
  }
  return "";
}

Diagnostic InfraDiagnostic(const std::string& stage, const Status& s) {
  Diagnostic d;
  d.stage = stage;
  d.code = "infra";
  d.message = s.message();
  return d;
}

Diagnostic EnvironmentDiagnostic(const build::EnvironmentFault& f) {
  Diagnostic d;
  d.stage = "build";
  d.code = "environment";
  d.message = "environment: " + f.detail;
  d.hint = f.fix;
  return d;
}

}  // namespace kf::eval
