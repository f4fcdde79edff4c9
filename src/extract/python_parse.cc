#include "extract/python_parse.h"

#include <algorithm>
#include <array>

namespace kf::extract {
namespace {

bool IsName(const Token& t, std::string_view name) {
  return t.kind == TokenKind::kName && t.text == name;
}

class Parser {
 public:
  explicit Parser(ParsedModule* m) : m_(*m), t_(m->tokens) {}

  bool Run(SyntaxError* error);

 private:
  void MatchBrackets();
  bool SplitStatements(SyntaxError* error);
  // Index of the first token in [b, e) at bracket depth 0 satisfying `pred`, else e.
  template <class Pred>
  int FindTop(int b, int e, Pred pred) const {
    for (int i = b; i < e; ++i) {
      if (pred(t_[i])) return i;
      if (IsOpen(t_[i]) && m_.partner[i] > i) i = m_.partner[i];
    }
    return e;
  }
  void Definitions();
  void Assignments(int s);
  void Imports(int s);
  void Calls(int s);
  // Reads a dotted name at `*i` ("a.b.c"); empty when there is none.
  std::string Dotted(int* i, int end) const;

  ParsedModule& m_;
  const std::vector<Token>& t_;
};

void Parser::MatchBrackets() {
  m_.partner.assign(t_.size(), -1);
  std::vector<int> open;  // the tokenizer already checked balance and nesting depth
  for (int i = 0; i < static_cast<int>(t_.size()); ++i) {
    if (IsOpen(t_[i])) {
      open.push_back(i);
    } else if (IsClose(t_[i]) && !open.empty()) {
      m_.partner[i] = open.back();
      m_.partner[open.back()] = i;
      open.pop_back();
    }
  }
}

bool Parser::SplitStatements(SyntaxError* error) {
  std::vector<int> blocks;  // open block headers (statement indices)
  std::vector<int> scopes;  // open def/class headers
  int pending = -1;         // a header waiting for its INDENT
  const int n = static_cast<int>(t_.size());
  auto fail = [&](std::string msg, const Token& at) {
    error->message = std::move(msg);
    error->line = at.line;
    error->col = at.col;
    return false;
  };
  auto expected_block = [&](const Token& at) {
    const Statement& h = m_.statements[pending];
    return fail("expected an indented block after '" + t_[h.begin].text + "' on line " +
                    std::to_string(h.line),
                at);
  };
  for (int i = 0; i < n && t_[i].kind != TokenKind::kEndMarker;) {
    const Token& tok = t_[i];
    if (tok.kind == TokenKind::kIndent) {
      if (pending < 0) return fail("unexpected indent", t_[i + 1]);
      blocks.push_back(pending);
      const std::string& kw = t_[m_.statements[pending].begin].text;
      if (kw == "def" || kw == "class" || kw == "async") scopes.push_back(pending);
      pending = -1;
      ++i;
      continue;
    }
    if (pending >= 0) return expected_block(tok);
    if (tok.kind == TokenKind::kDedent) {
      if (!blocks.empty()) {
        if (!scopes.empty() && scopes.back() == blocks.back()) scopes.pop_back();
        blocks.pop_back();
      }
      ++i;
      continue;
    }
    if (tok.kind == TokenKind::kNewline) {
      ++i;
      continue;
    }
    Statement s;
    s.begin = i;
    s.end = FindTop(i, n, [](const Token& t) {
      return t.kind == TokenKind::kNewline || t.kind == TokenKind::kEndMarker || IsOp(t, ";");
    });
    s.line = tok.line;
    s.end_line = t_[std::max(s.begin, s.end - 1)].end_line;
    s.parent = blocks.empty() ? -1 : blocks.back();
    s.scope = scopes.empty() ? -1 : scopes.back();
    const bool at_newline = s.end < n && t_[s.end].kind == TokenKind::kNewline;
    s.is_header = at_newline && s.end > s.begin && IsOp(t_[s.end - 1], ":");
    m_.statements.push_back(s);
    if (s.is_header) pending = static_cast<int>(m_.statements.size()) - 1;
    // A body's last line is the end line of the last statement inside it.
    for (int b : blocks) m_.statements[b].end_line = s.end_line;
    i = s.end < n && t_[s.end].kind != TokenKind::kEndMarker ? s.end + 1 : s.end;
  }
  if (pending >= 0) return expected_block(t_[n - 1]);
  return true;
}

std::string Parser::Dotted(int* i, int end) const {
  std::string name;
  while (*i < end && t_[*i].kind == TokenKind::kName && !IsPythonKeyword(t_[*i].text)) {
    name += t_[*i].text;
    ++*i;
    if (*i + 1 < end && IsOp(t_[*i], ".") && t_[*i + 1].kind == TokenKind::kName) {
      name += '.';
      ++*i;
    } else {
      break;
    }
  }
  return name;
}

void Parser::Definitions() {
  for (int si = 0; si < static_cast<int>(m_.statements.size()); ++si) {
    const Statement& s = m_.statements[si];
    int k = s.begin;
    if (IsName(t_[k], "async")) ++k;
    const bool is_def = IsName(t_[k], "def"), is_class = IsName(t_[k], "class");
    if (!(is_def || is_class) || k + 1 >= s.end || t_[k + 1].kind != TokenKind::kName) continue;
    FunctionDef d{t_[k + 1].text, s.line, s.end_line, si};
    if (s.parent < 0) {
      if (is_class) {
        m_.classes.push_back(ClassDef{d.name, d.line, d.end_line, si, {}});
      } else {
        m_.functions.push_back(d);
      }
    } else if (is_def) {
      for (ClassDef& c : m_.classes) {
        if (c.stmt == s.parent) c.methods.push_back(d);
      }
    }
  }
}

void Parser::Assignments(int si) {
  const Statement& s = m_.statements[si];
  const Token& first = t_[s.begin];
  if (first.kind != TokenKind::kName || IsPythonKeyword(first.text)) return;
  auto add = [&](const std::string& name, int vb, int ve, bool aug) {
    m_.assignments.push_back(Assignment{name, s.line, si, s.scope, vb, ve, aug});
  };
  if (s.end - s.begin >= 2 && IsOp(t_[s.begin + 1], "+=")) {
    add(first.text, s.begin + 2, s.end, true);
    return;
  }
  // Targets are the segments before each top-level '='; the value is the last segment.
  std::vector<std::pair<int, int>> segments;
  int b = s.begin;
  while (true) {
    const int e = FindTop(b, s.end, [](const Token& t) { return IsOp(t, "="); });
    segments.emplace_back(b, e);
    if (e >= s.end) break;
    b = e + 1;
  }
  if (segments.size() < 2) {
    // `name: T = value` has one '=' after an annotation; `name: T` alone binds nothing.
    return;
  }
  const auto [vb, ve] = segments.back();
  for (size_t k = 0; k + 1 < segments.size(); ++k) {
    const auto [tb, te] = segments[k];
    const bool plain = te - tb == 1 && t_[tb].kind == TokenKind::kName;
    const bool annotated = te - tb >= 2 && t_[tb].kind == TokenKind::kName && IsOp(t_[tb + 1], ":");
    if (plain || annotated) {
      add(t_[tb].text, vb, ve, false);
    } else if (FindTop(tb, te, [](const Token& t) { return IsOp(t, ","); }) < te) {
      for (int i = tb; i < te; ++i) {  // tuple target: names rebound to unknown values
        if (t_[i].kind == TokenKind::kName && !IsPythonKeyword(t_[i].text) &&
            (i == tb || !IsOp(t_[i - 1], "."))) {
          add(t_[i].text, -1, -1, false);
        }
      }
    }
  }
}

void Parser::Imports(int si) {
  const Statement& s = m_.statements[si];
  int i = s.begin;
  auto alias_after = [&](int* k, std::string fallback) {
    if (*k + 1 < s.end && IsName(t_[*k], "as") && t_[*k + 1].kind == TokenKind::kName) {
      fallback = t_[*k + 1].text;
      *k += 2;
    }
    return fallback;
  };
  if (IsName(t_[i], "import")) {
    ++i;
    while (i < s.end) {
      std::string mod = Dotted(&i, s.end);
      if (mod.empty()) return;
      std::string alias = alias_after(&i, mod.substr(0, mod.find('.')));
      m_.imports.push_back(Import{mod, "", alias, s.line, s.scope});
      if (i < s.end && IsOp(t_[i], ","))
        ++i;
      else
        return;
    }
  } else if (IsName(t_[i], "from")) {
    ++i;
    std::string mod;
    while (i < s.end && (IsOp(t_[i], ".") || IsOp(t_[i], "..."))) mod += t_[i++].text;
    mod += Dotted(&i, s.end);
    if (i >= s.end || !IsName(t_[i], "import")) return;
    ++i;
    while (i < s.end) {
      if (IsOp(t_[i], "(") || IsOp(t_[i], ")") || IsOp(t_[i], ",")) {
        ++i;
        continue;
      }
      if (t_[i].kind != TokenKind::kName && !IsOp(t_[i], "*")) return;
      std::string name = t_[i++].text;
      std::string alias = alias_after(&i, name);
      m_.imports.push_back(Import{mod, name, alias, s.line, s.scope});
    }
  }
}

void Parser::Calls(int si) {
  const Statement& s = m_.statements[si];
  for (int i = s.begin + 1; i < s.end; ++i) {
    if (!IsOp(t_[i], "(") || t_[i - 1].kind != TokenKind::kName) continue;
    // Walk back over `a.b.c` to the callee's first name.
    int b = i - 1;
    while (b - 2 >= s.begin && IsOp(t_[b - 1], ".") && t_[b - 2].kind == TokenKind::kName) b -= 2;
    if (b - 1 >= s.begin &&
        (IsOp(t_[b - 1], ".") || IsName(t_[b - 1], "def") || IsName(t_[b - 1], "class"))) {
      continue;  // a method of an expression (`f().g(`), or a definition
    }
    if (IsPythonKeyword(t_[i - 1].text)) continue;  // `if (`, `not (`
    Call c;
    int k = b;
    c.callee = Dotted(&k, i);
    c.line = t_[b].line;
    c.col = t_[b].col;
    c.callee_begin = b;
    c.lparen = i;
    c.rparen = m_.partner[i] > i ? m_.partner[i] : i;
    c.stmt = si;
    c.scope = s.scope;
    for (int ab = i + 1; ab < c.rparen;) {
      const int ae = FindTop(ab, c.rparen, [](const Token& t) { return IsOp(t, ","); });
      if (ae > ab) {
        Argument a{"", 0, ab, ae};
        if (IsOp(t_[ab], "*") || IsOp(t_[ab], "**")) {
          a.star = static_cast<int>(t_[ab].text.size());
          ++a.begin;
        } else if (ae - ab >= 2 && t_[ab].kind == TokenKind::kName && IsOp(t_[ab + 1], "=")) {
          a.keyword = t_[ab].text;
          a.begin += 2;
        }
        c.args.push_back(a);
      }
      ab = ae + 1;
    }
    m_.calls.push_back(std::move(c));
  }
}

bool Parser::Run(SyntaxError* error) {
  MatchBrackets();
  if (!SplitStatements(error)) return false;
  Definitions();
  for (int si = 0; si < static_cast<int>(m_.statements.size()); ++si) {
    Assignments(si);
    Imports(si);
    Calls(si);
  }
  std::stable_sort(m_.calls.begin(), m_.calls.end(),
                   [](const Call& a, const Call& b) { return a.lparen < b.lparen; });
  return true;
}

}  // namespace

bool IsPythonKeyword(std::string_view w) {
  static constexpr std::array<std::string_view, 35> kKeywords = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return std::find(kKeywords.begin(), kKeywords.end(), w) != kKeywords.end();
}

bool ParseModule(std::string_view src, ParsedModule* out, SyntaxError* error) {
  *out = ParsedModule{};
  std::vector<Token> all;
  if (!Tokenize(src, &all, error)) return false;
  for (Token& t : all) {
    (t.kind == TokenKind::kComment ? out->comments : out->tokens).push_back(std::move(t));
  }
  Parser p(out);
  return p.Run(error);
}

}  // namespace kf::extract
