// bench discovery: the problems of a bench run and the sample files that answer them.
//
// Problems: every `*.py` that problems::DefinesModel directly in each --problems folder (or a file
// given directly). The folder's name is the problem's level ("level1"); a KernelBench file
// `19_ReLU.py` also has the number 19.
//
// Samples, two layouts, both searched:
//  - ours: <samples>/<level>/<problem>/sample_<i>.<ext>  (<problem> = the problem's stem, or its
//    number for KernelBench problems; <ext> any: raw replies are accepted, e.g. sample_0.md)
//  - KernelBench's generation layout: level_<L>_problem_<P>_sample_<S>_kernel.py anywhere under
//    <samples>, matched by level number L and problem number P.
// A level folder matches by name or by number ("level1", "level_1" and "1" are level 1); a name
// match wins, so two versions of one benchmark can sit side by side (v0-level1, v01-level1).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace kf::bench {

struct ProblemFile {
  std::filesystem::path path;
  std::string level;                // folder name, e.g. "level1"
  std::optional<int> level_number;  // trailing digits of the folder name
  std::string stem;                 // "19_ReLU", "relu"
  std::optional<int> number;        // KernelBench's numeric prefix, 19
};

struct SampleFile {
  std::filesystem::path path;
  size_t problem = 0;  // index into Discovery::problems
  int index = 0;       // sample number
};

struct Discovery {
  std::vector<ProblemFile> problems;  // in folder order, then by number/stem
  std::vector<SampleFile> samples;    // by problem, then sample index
  std::vector<std::string> warnings;  // unmatched or ambiguous sample files
};

Result<std::vector<ProblemFile>> FindProblems(const std::vector<std::filesystem::path>& roots);
Discovery MatchSamples(std::vector<ProblemFile> problems,
                       const std::filesystem::path& samples_root);

}  // namespace kf::bench
