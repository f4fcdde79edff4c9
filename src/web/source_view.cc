// Kernel text on a page: the source with each diagnostic under its line, and the diff of two
// candidates. Every line is escaped; nothing of the text becomes markup.
#include <map>

#include "common/rules.h"
#include "web/diff.h"
#include "web/pages.h"

namespace kf::web {
namespace {

std::string DiagNote(const Diagnostic& d) {
  std::string rule = RuleName(d.code);
  std::string o = "<strong>" + H(d.code) + (rule.empty() ? "" : " " + H(rule)) + "</strong> · " +
                  H(d.stage) + " · " + H(SeverityName(d.severity)) + ": " + H(d.message);
  if (!d.hint.empty()) o += "<br><span class=\"hint\">" + H(d.hint) + "</span>";
  return o;
}

}  // namespace

std::string RuleName(const std::string& code) {
  const Rule* r = FindRule(code);
  return r && !r->note ? r->name : "";
}

std::string SourceView(const std::string& source, const std::vector<Diagnostic>& diags) {
  const std::vector<std::string> lines = SplitLines(source);
  std::map<int, std::vector<const Diagnostic*>> at;
  std::string loose;
  for (const auto& d : diags) {
    if (d.line >= 1 && d.line <= static_cast<int>(lines.size())) {
      at[d.line].push_back(&d);
    } else {
      loose += "<li class=\"sev-" + H(SeverityName(d.severity)) + "\">" + DiagNote(d) + "</li>";
    }
  }
  std::string o;
  if (!loose.empty()) o += "<ul class=\"loose\">" + loose + "</ul>";
  o += "<table class=\"src\">";
  for (size_t i = 0; i < lines.size(); ++i) {
    const int n = static_cast<int>(i) + 1;
    auto it = at.find(n);
    o += "<tr id=\"L" + std::to_string(n) + "\"" + (it != at.end() ? " class=\"hit\"" : "") +
         "><td class=\"ln\">" + std::to_string(n) + "</td><td class=\"code\">" + H(lines[i]) +
         "</td></tr>";
    if (it == at.end()) continue;
    for (const Diagnostic* d : it->second) {
      o += "<tr class=\"diag sev-" + H(SeverityName(d->severity)) +
           "\"><td class=\"ln\">&#9650;</td><td>" + DiagNote(*d) + "</td></tr>";
    }
  }
  return o + "</table>";
}

std::string DiffView(const std::string& a, const std::string& b, const std::string& a_name,
                     const std::string& b_name) {
  auto d = DiffLines(a, b);
  if (!d) return "<p class=\"empty\">These two texts are too long to diff here.</p>";
  int added = 0, removed = 0;
  for (const auto& l : *d) {
    added += l.op == DiffLine::Op::kAdded;
    removed += l.op == DiffLine::Op::kRemoved;
  }
  std::string o = "<p class=\"facts\"><span class=\"del\">&minus; " + H(a_name) + "</span> · " +
                  "<span class=\"add\">+ " + H(b_name) + "</span> · " + std::to_string(removed) +
                  " lines removed, " + std::to_string(added) + " added</p>";
  if (added + removed == 0) return o + "<p class=\"empty\">The texts are the same.</p>";
  o += "<table class=\"src diff\">";
  constexpr size_t kContext = 3;
  for (size_t i = 0; i < d->size(); ++i) {
    const DiffLine& l = (*d)[i];
    if (l.op == DiffLine::Op::kSame) {
      // Unchanged lines far from any change fold into one row.
      size_t j = i;
      while (j < d->size() && (*d)[j].op == DiffLine::Op::kSame) ++j;
      const size_t lead = i == 0 ? 0 : kContext, trail = j == d->size() ? 0 : kContext;
      if (j - i > lead + trail + 1) {
        for (size_t k = i; k < i + lead; ++k) {
          o += "<tr><td class=\"ln\">" + std::to_string((*d)[k].b_line) +
               "</td><td class=\"code\"> " + H((*d)[k].text) + "</td></tr>";
        }
        o += "<tr class=\"fold\"><td></td><td>&hellip; " + std::to_string(j - i - lead - trail) +
             " unchanged lines &hellip;</td></tr>";
        i = j - trail - 1;
        continue;
      }
    }
    const char* cls = l.op == DiffLine::Op::kAdded     ? "add"
                      : l.op == DiffLine::Op::kRemoved ? "del"
                                                       : "";
    const char* mark = l.op == DiffLine::Op::kAdded     ? "+"
                       : l.op == DiffLine::Op::kRemoved ? "-"
                                                        : " ";
    const int n = l.op == DiffLine::Op::kRemoved ? l.a_line : l.b_line;
    o += std::string("<tr class=\"") + cls + "\"><td class=\"ln\">" + std::to_string(n) +
         "</td><td class=\"code\">" + mark + H(l.text) + "</td></tr>";
  }
  return o + "</table>";
}

}  // namespace kf::web
