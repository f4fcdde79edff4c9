#include "score/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>

namespace kf::score::internal {

std::string FormatMs(double ms) {
  if (!std::isfinite(ms)) {
    return "?";
  }
  int decimals = 3;
  if (ms != 0) {
    decimals = 3 - static_cast<int>(std::floor(std::log10(std::fabs(ms))));
  }
  decimals = std::clamp(decimals, 0, 6);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, ms);
  return buf;
}

std::string FormatSpeedup(double speedup) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f\u00d7", speedup);
  return buf;
}

std::string FormatReward(const std::optional<double>& reward) {
  if (!reward) {
    return "none";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.4f", *reward);
  return buf;
}

const StageRecord* FailedStage(const Verdict& v) {
  for (const StageRecord& s : v.stages) {
    if (!s.ok) {
      return &s;
    }
  }
  return nullptr;
}

std::string Location(const Diagnostic& d) {
  if (d.line <= 0) {
    return "";
  }
  std::string out = "line " + std::to_string(d.line);
  if (d.col > 0) {
    out += ":" + std::to_string(d.col);
  }
  return out;
}

std::vector<std::string> DiagnosticLines(const Diagnostic& d, int indent) {
  std::string head = Location(d);
  if (!head.empty()) {
    head += ": ";
  }
  head += d.message;
  if (!d.code.empty()) {
    head += " [" + d.code + "]";
  }
  std::vector<std::string> lines = {head};
  for (std::string& l : DetailLines(d, indent)) {
    lines.push_back(std::move(l));
  }
  return lines;
}

std::vector<std::string> DetailLines(const Diagnostic& d, int indent) {
  std::vector<std::string> lines;
  const std::string pad(indent, ' ');
  std::istringstream excerpt(d.excerpt);
  for (std::string l; std::getline(excerpt, l);) {
    lines.push_back(pad + "| ");
    lines.back() += l;
  }
  if (!d.hint.empty()) {
    lines.push_back(pad + "hint: " + d.hint);
  }
  return lines;
}

}  // namespace kf::score::internal
