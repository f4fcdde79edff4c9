// Finding the candidate inside a model's reply: Markdown fenced code blocks (CommonMark rules,
// reduced to what replies use), and a cheap test for whether fence-less text is Python at all.
#include "extract/fence.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "extract/extract.h"

namespace kf::extract {
namespace {

struct Line {
  std::string_view text;  // without the line break (a '\r' before '\n' stripped too)
  size_t begin = 0;       // offset of the line in the whole text
  int number = 0;
};

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  size_t b = 0;
  for (int n = 1; b < text.size(); ++n) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    std::string_view t = text.substr(b, e - b);
    if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
    lines.push_back({t, b, n});
    b = e + 1;
  }
  return lines;
}

// A fence is up to three spaces, then three or more of '`' or '~'. Returns its length (0: not
// a fence) and its character.
size_t FenceRun(std::string_view line, char* c) {
  size_t i = 0;
  while (i < 3 && i < line.size() && line[i] == ' ') ++i;
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return 0;
  *c = line[i];
  size_t n = 0;
  while (i + n < line.size() && line[i + n] == *c) ++n;
  return n >= 3 ? n : 0;
}

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t\r\f\v") == s.npos; }

bool DefinesModelNew(std::string_view body) {
  for (const Line& l : SplitLines(body)) {
    std::string_view t = l.text;
    if (t.substr(0, 8) == "ModelNew") {  // `ModelNew = Model`
      std::string_view rest = t.substr(8);
      rest.remove_prefix(std::min(rest.find_first_not_of(" \t"), rest.size()));
      if (rest.size() >= 2 && rest[0] == '=' && rest[1] != '=') return true;
    }
    if (t.substr(0, 5) != "class") continue;
    t.remove_prefix(5);
    if (t.empty() || (t[0] != ' ' && t[0] != '\t')) continue;
    t.remove_prefix(t.find_first_not_of(" \t") == t.npos ? t.size() : t.find_first_not_of(" \t"));
    if (t.substr(0, 8) == "ModelNew" &&
        (t.size() == 8 || t[8] == '(' || t[8] == ':' || t[8] == ' ' || t[8] == '\t')) {
      return true;
    }
  }
  return false;
}

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

bool FirstFencedBlock(std::string_view text, std::string* body, int* body_first_line) {
  const std::vector<Line> lines = SplitLines(text);
  bool found = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    char c = 0;
    const size_t open = FenceRun(lines[i].text, &c);
    if (open == 0) continue;
    // The block runs to a closing fence of the same character, at least as long, with nothing
    // after it; an unclosed block runs to the end of the text (CommonMark).
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      char d = 0;
      const size_t close = FenceRun(lines[j].text, &d);
      if (close >= open && d == c) {
        const size_t at = lines[j].text.find_first_not_of(' ');
        if (IsBlank(lines[j].text.substr(at + close))) break;
      }
    }
    const size_t b = i + 1 < lines.size() ? lines[i + 1].begin : text.size();
    const size_t e = j < lines.size() ? lines[j].begin : text.size();
    std::string_view block = text.substr(b, e - b);
    const bool has_model_new = DefinesModelNew(block);
    if (!found || has_model_new) {
      *body = std::string(block);
      *body_first_line = lines[i].number + 1;
    }
    if (has_model_new) return true;
    found = true;
    i = j;
  }
  return found;
}

bool LooksLikePython(std::string_view text) {
  for (const Line& l : SplitLines(text)) {
    std::string_view t = l.text;
    const size_t first = t.find_first_not_of(" \t");
    if (first == t.npos) continue;
    t.remove_prefix(first);
    for (std::string_view kw : {"import ", "from ", "def ", "class ", "async def ", "@"}) {
      if (t.substr(0, kw.size()) == kw) return true;
    }
    // `name = value` or `name.attr = value`, but not `==`.
    size_t k = 0;
    while (k < t.size() && (IsIdentChar(t[k]) || t[k] == '.')) ++k;
    if (k == 0 || (t[0] >= '0' && t[0] <= '9')) continue;
    while (k < t.size() && t[k] == ' ') ++k;
    if (k + 1 < t.size() && t[k] == '=' && t[k + 1] != '=') return true;
  }
  return false;
}

}  // namespace kf::extract
