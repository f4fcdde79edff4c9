#include "web/diff.h"

#include <cstdint>

namespace kf::web {

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    at = nl + 1;
  }
  return lines;
}

std::optional<std::vector<DiffLine>> DiffLines(const std::string& a_text, const std::string& b_text,
                                               size_t max_cells) {
  const std::vector<std::string> a = SplitLines(a_text), b = SplitLines(b_text);
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head &&
         a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) {
    ++tail;
  }
  const size_t n = a.size() - head - tail, m = b.size() - head - tail;
  if (n * m > max_cells) return std::nullopt;
  // lcs[i][j]: the LCS length of a's middle from i and b's middle from j.
  std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      at(i, j) =
          a[head + i] == b[head + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  std::vector<DiffLine> out;
  int al = 0, bl = 0;
  auto same = [&](const std::string& t) { out.push_back({DiffLine::Op::kSame, t, ++al, ++bl}); };
  for (size_t k = 0; k < head; ++k) same(a[k]);
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[head + i] == b[head + j]) {
      same(a[head + i]);
      ++i;
      ++j;
    } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
      out.push_back({DiffLine::Op::kRemoved, a[head + i], ++al, 0});  // removals first
      ++i;
    } else {
      out.push_back({DiffLine::Op::kAdded, b[head + j], 0, ++bl});
      ++j;
    }
  }
  for (size_t k = a.size() - tail; k < a.size(); ++k) same(a[k]);
  return out;
}

}  // namespace kf::web
