// diff: a line diff of two candidates (longest common subsequence of lines), for the verdict
// page's "diff against another candidate". Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kf::web {

struct DiffLine {
  enum class Op { kSame, kRemoved, kAdded };
  Op op = Op::kSame;
  std::string text;
  int a_line = 0, b_line = 0;  // 1-based line in a (same, removed) and in b (same, added)
};

std::vector<std::string> SplitLines(const std::string& text);

// The lines of `a` and `b` in order, each marked same, removed (only in a) or added (only in
// b). Common first and last lines are matched directly; the middle by LCS, when it has at
// most `max_cells` line pairs (else nullopt: too large to show).
std::optional<std::vector<DiffLine>> DiffLines(const std::string& a, const std::string& b,
                                               size_t max_cells = 4'000'000);

}  // namespace kf::web
