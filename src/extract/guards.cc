#include "extract/guards.h"

#include "extract/python_parse.h"

namespace kf::extract {

std::vector<GuardBlock> FallbackGuards(std::string_view code) {
  ParsedModule m;
  SyntaxError err;
  std::vector<GuardBlock> out;
  if (!ParseModule(code, &m, &err)) return out;
  for (const Statement& s : m.statements) {
    const Token& first = m.tokens[s.begin];
    if (first.kind != TokenKind::kName) continue;
    const bool is_finally = first.text == "finally";
    if (first.text != "except" && !is_finally) continue;
    // A header's end_line is its body's last line; a one-line `except E: y` is one statement.
    out.push_back({s.line, s.end_line, is_finally});
  }
  return out;
}

}  // namespace kf::extract
