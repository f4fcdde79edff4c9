// The judge's tolerances: one definition of how close each output dtype must come to the
// reference (an element passes when |out - ref| <= atol + rtol * |ref|). kforge sends complete
// maps with every request that compares outputs (the judge's check, lint-problems' and synth's
// trivial-answer and conditioning checks); the runner keeps no table of its own.
//
// Thread-safety: values only.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kf {

struct Tolerances {
  // Per output dtype name as the runner names it ("float32", "bfloat16"). A dtype not named is
  // compared exactly (0.0): integer and bool outputs, and floating types without an entry.
  std::map<std::string, double> atol, rtol;
};

// The defaults (atol = rtol: float32 1e-4, float64 1e-7, float16 and bfloat16 1e-2), with the
// float32 entries replaced by `float32_atol` and `float32_rtol` where those are not negative
// (--atol and --rtol; negative: the default). The other dtypes keep theirs.
Tolerances DefaultTolerances(double float32_atol = -1, double float32_rtol = -1);

// The runner's command-line form of `t` (its lint and synth modules): "--atol", the atol map as
// a JSON object, "--rtol", the rtol map.
std::vector<std::string> ToleranceFlags(const Tolerances& t);

}  // namespace kf
