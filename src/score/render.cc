// Render: the human view of a verdict for `kforge eval`. Same facts as the JSON, laid out
// for reading; color only marks the status so that piped output stays plain with color=false.
#include <sstream>
#include <string>

#include "score/format.h"
#include "score/score.h"

namespace kf::score {
namespace {

using internal::FormatMs;
using internal::FormatSpeedup;

constexpr const char* kGreen = "\033[32m";
constexpr const char* kRed = "\033[31m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kReset = "\033[0m";

const char* StatusColor(VerdictStatus s) {
  switch (s) {
    case VerdictStatus::kOk:
      return kGreen;
    case VerdictStatus::kTimeout:
    case VerdictStatus::kIncorrect:
      return kYellow;
    default:
      return kRed;
  }
}

// "abc (hash)" without empty parts.
std::string WithParen(const std::string& main, const std::string& extra) {
  if (extra.empty()) {
    return main.empty() ? "-" : main;
  }
  return (main.empty() ? "-" : main) + " (" + extra + ")";
}

std::string OptMs(const std::optional<double>& ms) {
  return ms ? FormatMs(*ms) + " ms" : "unknown";
}

std::string OptSpeedup(const std::optional<double>& s) { return s ? FormatSpeedup(*s) : "unknown"; }

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) {
    s.append(width - s.size(), ' ');
  }
  return s;
}

}  // namespace

std::string Render(const Verdict& v, bool color) {
  std::ostringstream o;
  std::string status = StatusName(v.status);
  if (color) {
    status = std::string(kBold) + StatusColor(v.status) + status + kReset;
  }
  o << "status:      " << status << "\n";
  o << "problem:     " << WithParen(v.problem_id, v.problem_hash) << "\n";
  o << "candidate:   " << WithParen(v.candidate_hash, v.candidate_format) << "\n";
  o << "backend:     " << WithParen(v.backend, v.device) << "\n";
  o << "policy:      " << v.policy;
  if (!v.pytorch_ops.empty()) {
    o << " (PyTorch computed:";
    for (const auto& op : v.pytorch_ops) o << " " << op;
    o << ")";
  }
  o << "\n";

  if (!v.stages.empty()) {
    o << "stages:\n";
  }
  for (const StageRecord& s : v.stages) {
    o << "  " << Pad(s.name, 12) << Pad(s.ok ? "ok" : "FAILED", 8) << FormatMs(s.ms) << " ms\n";
  }
  o << "correctness: " << v.trials_passed << "/" << v.trials_total << " trials passed\n";

  o << "timing:\n";
  o << "  candidate  ";
  if (v.candidate_ms) {
    const TimingSummary& t = *v.candidate_ms;
    o << FormatMs(t.median_ms) << " ms [" << FormatMs(t.p10_ms) << "\u2013" << FormatMs(t.p90_ms)
      << "] n=" << t.n << "\n";
  } else {
    o << "unknown\n";
  }
  o << "  eager      " << OptMs(v.eager_ms) << "\n";
  o << "  compile    ";
  if (v.compile_ms) {
    o << FormatMs(*v.compile_ms) << " ms\n";
  } else {
    o << "unavailable" << (v.compile_unavailable.empty() ? "" : ": " + v.compile_unavailable)
      << "\n";
  }
  o << "speedup:     " << OptSpeedup(v.speedup_vs_eager) << " vs eager, "
    << OptSpeedup(v.speedup_vs_compile) << " vs torch.compile\n";
  o << "reward:      " << internal::FormatReward(v.reward) << "\n";

  if (!v.diagnostics.empty()) {
    o << "diagnostics:\n";
  }
  for (const Diagnostic& d : v.diagnostics) {
    std::string where = internal::Location(d);
    o << "  " << Pad(SeverityName(d.severity), 8) << (where.empty() ? "" : where + ": ")
      << d.message << (d.code.empty() ? "" : " [" + d.code + "]") << "\n";
    for (const std::string& l : internal::DetailLines(d, 10)) {
      o << l << "\n";
    }
  }
  if (!v.feedback.empty()) {
    o << "feedback:\n";
    std::istringstream fb(v.feedback);
    for (std::string l; std::getline(fb, l);) {
      o << "  " << l << "\n";
    }
  }
  return o.str();
}

}  // namespace kf::score
