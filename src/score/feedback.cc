// Feedback: the text a model reads after each attempt. It has to say what to fix, so every
// status leads with one plain sentence and then the concrete facts (lines, errors, numbers).
#include <string>
#include <utility>
#include <vector>

#include "score/format.h"
#include "score/score.h"

namespace kf::score {
namespace {

using internal::DiagnosticLines;
using internal::FormatMs;
using internal::FormatSpeedup;
using internal::Location;

// Bounds keep the prompt of the next turn small; the first findings are the useful ones.
constexpr size_t kMaxLines = 40;
constexpr size_t kMaxChars = 4000;
constexpr size_t kMaxDiagnostics = 5;

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  size_t shown = 0;
  for (; shown < lines.size(); ++shown) {
    // Leave room for the "... N more lines" marker itself.
    if (shown + 1 >= kMaxLines && shown + 1 < lines.size()) {
      break;
    }
    if (out.size() + lines[shown].size() + 1 > kMaxChars - 32) {
      break;
    }
    out += lines[shown];
    out += '\n';
  }
  if (shown < lines.size()) {
    out += "... " + std::to_string(lines.size() - shown) + " more lines\n";
  }
  if (!out.empty()) {
    out.pop_back();  // no trailing newline
  }
  return out;
}

// Appends up to kMaxDiagnostics diagnostics of the given severities, then a count of the rest.
void AddDiagnostics(const Verdict& v, bool errors, bool warnings, std::vector<std::string>* out) {
  size_t matched = 0;
  for (const Diagnostic& d : v.diagnostics) {
    bool want = (errors && d.severity == Severity::kError) ||
                (warnings && d.severity == Severity::kWarning);
    if (!want) {
      continue;
    }
    if (++matched > kMaxDiagnostics) {
      continue;
    }
    std::vector<std::string> lines = DiagnosticLines(d, 4);
    lines.front().insert(0, "- ");  // a bullet per diagnostic; its details stay indented
    for (std::string& l : lines) {
      out->push_back(std::move(l));
    }
  }
  if (matched > kMaxDiagnostics) {
    out->push_back("... " + std::to_string(matched - kMaxDiagnostics) + " more diagnostics");
  }
}

// "The build stage failed after 1234 ms." when a stage failed, else nothing.
void AddFailedStage(const Verdict& v, const char* verb, std::vector<std::string>* out) {
  const StageRecord* s = internal::FailedStage(v);
  if (!s) {
    return;
  }
  out->push_back("The " + s->name + " stage " + verb + " after " + FormatMs(s->ms) + " ms.");
}

std::string Trials(const Verdict& v) {
  return std::to_string(v.trials_passed) + " of " + std::to_string(v.trials_total);
}

void OkLines(const Verdict& v, std::vector<std::string>* out) {
  out->push_back("Correct: passed " + Trials(v) + " correctness trials.");
  if (v.candidate_ms) {
    const TimingSummary& t = *v.candidate_ms;
    out->push_back("Your kernel takes " + FormatMs(t.median_ms) + " ms (median of " +
                   std::to_string(t.n) + " runs; p10 " + FormatMs(t.p10_ms) + " ms, p90 " +
                   FormatMs(t.p90_ms) + " ms).");
  }
  if (v.eager_ms) {
    std::string l = "Eager PyTorch takes " + FormatMs(*v.eager_ms) + " ms";
    if (v.speedup_vs_eager) {
      l += ": speedup " + FormatSpeedup(*v.speedup_vs_eager) + " vs eager";
    }
    out->push_back(l + ".");
  }
  if (v.compile_ms) {
    std::string l = "torch.compile takes " + FormatMs(*v.compile_ms) + " ms";
    if (v.speedup_vs_compile) {
      l += ": speedup " + FormatSpeedup(*v.speedup_vs_compile) + " vs torch.compile";
    }
    out->push_back(l + ".");
  } else if (!v.compile_unavailable.empty()) {
    out->push_back("No torch.compile time: " + v.compile_unavailable + ".");
  }
  if (v.speedup_vs_eager && *v.speedup_vs_eager < 1) {
    out->push_back("Your kernel is slower than eager PyTorch; it earns no speed bonus.");
  }
  for (const Diagnostic& d : v.diagnostics) {
    if (d.code == "roofline" && d.severity == Severity::kInfo) {
      out->push_back("What bounds it: " + d.message);
      if (!d.hint.empty()) {
        out->push_back("Hint: " + d.hint);
      }
    }
  }
  AddDiagnostics(v, false, true, out);
}

void CheatLines(const Verdict& v, std::vector<std::string>* out) {
  out->push_back(
      "Your code breaks a verification rule. This is not allowed: the attempt counts "
      "as a failure.");
  size_t shown = 0;
  for (const Diagnostic& d : v.diagnostics) {
    if (d.severity != Severity::kError) {
      continue;
    }
    if (++shown > kMaxDiagnostics) {
      continue;
    }
    std::string where = Location(d);
    out->push_back("- Rule " + (d.code.empty() ? std::string("?") : d.code) +
                   (where.empty() ? "" : " at " + where) + ": " + d.message);
    for (std::string& l : internal::DetailLines(d, 4)) {
      out->push_back(std::move(l));
    }
  }
  if (shown > kMaxDiagnostics) {
    out->push_back("... " + std::to_string(shown - kMaxDiagnostics) + " more diagnostics");
  }
  out->push_back("Compute the result in your own kernel without the forbidden construct.");
}

}  // namespace

std::string Feedback(const Verdict& v) {
  std::vector<std::string> out;
  switch (v.status) {
    case VerdictStatus::kOk:
      OkLines(v, &out);
      break;
    case VerdictStatus::kFormatError:
      out.push_back("Your submission could not be read as a candidate.");
      AddDiagnostics(v, true, false, &out);
      break;
    case VerdictStatus::kCompileError:
      out.push_back("Your code did not compile.");
      AddDiagnostics(v, true, false, &out);
      break;
    case VerdictStatus::kRuntimeError:
      out.push_back("Your code failed while running.");
      AddFailedStage(v, "failed", &out);
      AddDiagnostics(v, true, false, &out);
      break;
    case VerdictStatus::kTimeout:
      out.push_back("Your code did not finish in time.");
      AddFailedStage(v, "was stopped", &out);
      AddDiagnostics(v, true, true, &out);
      out.push_back("Look for infinite loops, deadlocks, or far more work per launch than needed.");
      break;
    case VerdictStatus::kIncorrect:
      out.push_back("Your output is wrong: passed " + Trials(v) + " correctness trials.");
      AddDiagnostics(v, true, true, &out);
      break;
    case VerdictStatus::kCheat:
      CheatLines(v, &out);
      break;
    case VerdictStatus::kInfraError:
      out.push_back("The verifier itself failed; this says nothing about your code.");
      AddDiagnostics(v, true, false, &out);
      break;
  }
  return Join(out);
}

}  // namespace kf::score
