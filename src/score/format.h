// Internal to score: number and diagnostic formatting shared by Feedback and Render, so the
// model and the terminal user see the same figures.
#pragma once

#include <string>
#include <vector>

#include "score/verdict.h"

namespace kf::score::internal {

// Milliseconds with four significant digits in fixed notation ("0.01234", "12.34", "1234").
std::string FormatMs(double ms);
// "2.05×".
std::string FormatSpeedup(double speedup);
// "+1.2500", "-1.0000" or "none".
std::string FormatReward(const std::optional<double>& reward);

// The first stage that did not pass, or nullptr when all passed.
const StageRecord* FailedStage(const Verdict& v);

// The lines describing one diagnostic: "line 12:5: message [code]", then the excerpt's lines
// behind "| " and "hint: ...", the latter two indented by `indent` spaces.
std::vector<std::string> DiagnosticLines(const Diagnostic& d, int indent);

// Only the excerpt and hint lines of DiagnosticLines.
std::vector<std::string> DetailLines(const Diagnostic& d, int indent);

// "line 12:5", "line 12", or "" when the line is unknown.
std::string Location(const Diagnostic& d);

}  // namespace kf::score::internal
