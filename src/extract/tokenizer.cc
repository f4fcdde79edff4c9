#include "extract/tokenizer.h"

#include <cstdio>
#include <utility>

namespace kf::extract {
namespace {

bool IsAsciiAlpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
// Bytes >= 0x80 count as identifier characters: Python accepts Unicode identifiers, and being
// lenient here only means a bad name fails later, in Python, instead of here.
bool IsIdentStart(unsigned char c) { return IsAsciiAlpha(c) || c == '_' || c >= 0x80; }
bool IsIdentChar(unsigned char c) { return IsIdentStart(c) || IsDigit(c); }
bool IsQuote(char c) { return c == '\'' || c == '"'; }

// The prefixes Python allows, in any case: u alone, r alone or with b or f; never b with f.
bool IsStringPrefix(std::string_view s) {
  if (s.empty() || s.size() > 2) return false;
  std::string lower;
  for (char c : s) lower += static_cast<char>(c | 0x20);  // ASCII lower case
  for (std::string_view p : {"r", "u", "b", "f", "br", "rb", "fr", "rf"}) {
    if (lower == p) return true;
  }
  return false;
}

bool HasF(std::string_view prefix) {
  for (char c : prefix) {
    if ((c | 0x20) == 'f') return true;
  }
  return false;
}

constexpr const char* kOps3[] = {"**=", "//=", ">>=", "<<=", "..."};
constexpr const char* kOps2[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", "+=",
                                 "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", ":="};
constexpr std::string_view kOps1 = "()[]{}:,;.+-*/%&|^~<>=@";

class Tokenizer {
 public:
  Tokenizer(std::string_view src, std::vector<Token>* out) : src_(src), out_(out) {}

  bool Run(SyntaxError* error);

 private:
  struct Open {
    char c;
    int line, col;
  };
  struct Indent {
    int col;      // tabs to multiples of 8, as Python counts
    int alt_col;  // tabs as one column: disagreement means tabs and spaces were mixed
  };

  // Length of the line break starting at `p`: 2 for "\r\n", 1 for "\n" or "\r", else 0.
  size_t BreakLen(size_t p) const {
    if (p >= src_.size()) return 0;
    if (src_[p] == '\n') return 1;
    if (src_[p] == '\r') return (p + 1 < src_.size() && src_[p + 1] == '\n') ? 2 : 1;
    return 0;
  }
  void StartLine(size_t at) {
    ++line_;
    line_start_ = at;
  }
  int Col(size_t p) const { return static_cast<int>(p - line_start_) + 1; }
  bool Fail(std::string msg, int line, int col) {
    error_->message = std::move(msg);
    error_->line = line;
    error_->col = col;
    return false;
  }
  void Emit(TokenKind kind, size_t begin, size_t end, int line, int col) {
    out_->push_back(Token{kind, std::string(src_.substr(begin, end - begin)), line, col, line_});
  }

  bool Indentation();
  bool Bracket(char c);
  bool ScanString(size_t* p, bool is_f, int depth);
  bool ScanFExpr(size_t* p, bool triple, int depth, int line, int col);
  bool ScanFormatSpec(size_t* p, bool triple, int depth, int line, int col);
  bool UnterminatedAt(size_t p, bool triple, int line, int col) {
    if (p < src_.size() && !triple) return Fail("unterminated string literal", line, col);
    return Fail(std::string(triple ? "unterminated triple-quoted string literal"
                                   : "unterminated string literal") +
                    " (opened at line " + std::to_string(line) + ")",
                line, col);
  }
  void Number();

  std::string_view src_;
  std::vector<Token>* out_;
  SyntaxError* error_ = nullptr;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  std::vector<Open> brackets_;
  std::vector<Indent> indents_{{0, 0}};
};

// At the start of a logical line: measures indentation and emits INDENT/DEDENT. Blank and
// comment-only lines do not take part in indentation, as in Python.
bool Tokenizer::Indentation() {
  int col = 0, alt = 0;
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == ' ') {
      ++col, ++alt;
    } else if (c == '\t') {
      col = (col / 8 + 1) * 8;
      ++alt;
    } else if (c == '\f') {
      col = alt = 0;
    } else {
      break;
    }
    ++pos_;
  }
  if (pos_ >= src_.size() || BreakLen(pos_) != 0 || src_[pos_] == '#') return true;
  const int line = line_, at = Col(pos_);
  const char* kMixed = "inconsistent use of tabs and spaces in indentation";
  if (col > indents_.back().col) {
    if (alt <= indents_.back().alt_col) return Fail(kMixed, line, at);
    indents_.push_back({col, alt});
    Emit(TokenKind::kIndent, pos_, pos_, line, 1);
    return true;
  }
  while (col < indents_.back().col) {
    indents_.pop_back();
    Emit(TokenKind::kDedent, pos_, pos_, line, at);
  }
  if (col != indents_.back().col) {
    return Fail("unindent does not match any outer indentation level", line, at);
  }
  if (alt != indents_.back().alt_col) return Fail(kMixed, line, at);
  return true;
}

bool Tokenizer::Bracket(char c) {
  const int col = Col(pos_);
  if (c == '(' || c == '[' || c == '{') {
    if (static_cast<int>(brackets_.size()) >= kMaxBracketDepth) {
      return Fail("too many nested parentheses", line_, col);
    }
    brackets_.push_back({c, line_, col});
    return true;
  }
  if (brackets_.empty()) return Fail(std::string("unmatched '") + c + "'", line_, col);
  const Open open = brackets_.back();
  const char want = open.c == '(' ? ')' : open.c == '[' ? ']' : '}';
  if (c != want) {
    return Fail(std::string("closing parenthesis '") + c +
                    "' does not match opening parenthesis '" + open.c + "' on line " +
                    std::to_string(open.line),
                line_, col);
  }
  brackets_.pop_back();
  return true;
}

// `*p` is at the opening quote; on success it is just past the closing quote. F-string
// placeholders are scanned as nested expressions so quotes inside them (Python 3.12) do not
// end the string early.
bool Tokenizer::ScanString(size_t* p, bool is_f, int depth) {
  const int line = line_, col = Col(*p);
  if (depth > kMaxBracketDepth) return Fail("f-string nested too deeply", line, col);
  const char q = src_[*p];
  const bool triple = *p + 2 < src_.size() && src_[*p + 1] == q && src_[*p + 2] == q;
  *p += triple ? 3 : 1;
  while (*p < src_.size()) {
    const char c = src_[*p];
    if (c == '\\') {
      const size_t nl = BreakLen(*p + 1);
      if (nl != 0) {
        *p += 1 + nl;
        StartLine(*p);
      } else {
        *p += *p + 1 < src_.size() ? 2 : 1;
      }
    } else if (const size_t nl = BreakLen(*p); nl != 0) {
      if (!triple) return UnterminatedAt(*p, triple, line, col);
      *p += nl;
      StartLine(*p);
    } else if (c == q) {
      if (!triple) return ++*p, true;
      if (*p + 2 < src_.size() && src_[*p + 1] == q && src_[*p + 2] == q) return *p += 3, true;
      ++*p;
    } else if (is_f && c == '{') {
      if (*p + 1 < src_.size() && src_[*p + 1] == '{') {
        *p += 2;
      } else {
        ++*p;
        if (!ScanFExpr(p, triple, depth + 1, line, col)) return false;
      }
    } else {
      ++*p;
    }
  }
  return UnterminatedAt(*p, triple, line, col);
}

// Inside `{...}` of an f-string, up to and past the matching '}'.
bool Tokenizer::ScanFExpr(size_t* p, bool triple, int depth, int line, int col) {
  if (depth > kMaxBracketDepth) return Fail("f-string nested too deeply", line, col);
  int nest = 0;
  while (*p < src_.size()) {
    const char c = src_[*p];
    if (const size_t nl = BreakLen(*p); nl != 0) {
      if (!triple) return UnterminatedAt(*p, triple, line, col);
      *p += nl;
      StartLine(*p);
    } else if (c == '(' || c == '[' || c == '{') {
      if (++nest > kMaxBracketDepth) return Fail("f-string nested too deeply", line, col);
      ++*p;
    } else if (c == ')' || c == ']' || c == '}') {
      ++*p;
      if (nest == 0 && c == '}') return true;
      if (nest > 0) --nest;
    } else if (c == ':' && nest == 0) {
      ++*p;
      return ScanFormatSpec(p, triple, depth + 1, line, col);
    } else if (IsQuote(c)) {
      if (!ScanString(p, false, depth + 1)) return false;
    } else if (IsIdentStart(static_cast<unsigned char>(c))) {
      const size_t b = *p;
      while (*p < src_.size() && IsIdentChar(static_cast<unsigned char>(src_[*p]))) ++*p;
      std::string_view word = src_.substr(b, *p - b);
      if (*p < src_.size() && IsQuote(src_[*p]) && IsStringPrefix(word)) {
        if (!ScanString(p, HasF(word), depth + 1)) return false;
      }
    } else {
      ++*p;
    }
  }
  return UnterminatedAt(*p, triple, line, col);
}

// After ':' in a placeholder: literal text with nested `{...}`, up to and past the closing '}'.
bool Tokenizer::ScanFormatSpec(size_t* p, bool triple, int depth, int line, int col) {
  while (*p < src_.size()) {
    const char c = src_[*p];
    if (const size_t nl = BreakLen(*p); nl != 0) {
      if (!triple) return UnterminatedAt(*p, triple, line, col);
      *p += nl;
      StartLine(*p);
    } else if (c == '{') {
      ++*p;
      if (!ScanFExpr(p, triple, depth + 1, line, col)) return false;
    } else {
      ++*p;
      if (c == '}') return true;
    }
  }
  return UnterminatedAt(*p, triple, line, col);
}

void Tokenizer::Number() {
  size_t p = pos_;
  const size_t n = src_.size();
  if (src_[p] == '0' && p + 1 < n &&
      std::string_view("xXoObB").find(src_[p + 1]) != std::string_view::npos) {
    p += 2;
    while (p < n && (IsAsciiAlpha(src_[p]) || IsDigit(src_[p]) || src_[p] == '_')) ++p;
  } else {
    while (p < n) {
      const char c = src_[p];
      if (IsDigit(c) || c == '_' || c == '.') {
        ++p;
      } else if (c == 'e' || c == 'E') {
        ++p;
        if (p + 1 < n && (src_[p] == '+' || src_[p] == '-') && IsDigit(src_[p + 1])) ++p;
      } else {
        if (c == 'j' || c == 'J') ++p;
        break;
      }
    }
  }
  Emit(TokenKind::kNumber, pos_, p, line_, Col(pos_));
  pos_ = p;
}

bool Tokenizer::Run(SyntaxError* error) {
  error_ = error;
  out_->clear();
  bool at_line_start = true;
  bool line_has_tokens = false;  // the logical line so far has a token other than a comment
  const size_t n = src_.size();
  while (true) {
    if (at_line_start) {
      at_line_start = false;
      if (!Indentation()) return false;
    }
    while (pos_ < n && (src_[pos_] == ' ' || src_[pos_] == '\t' || src_[pos_] == '\f')) ++pos_;
    if (pos_ >= n) break;
    const char c = src_[pos_];
    const int line = line_, col = Col(pos_);
    if (const size_t nl = BreakLen(pos_); nl != 0) {
      const bool ends_statement = brackets_.empty() && line_has_tokens;
      if (ends_statement) Emit(TokenKind::kNewline, pos_, pos_ + nl, line, col);
      pos_ += nl;
      StartLine(pos_);
      if (brackets_.empty()) {
        at_line_start = true;
        line_has_tokens = false;
      }
      continue;
    }
    if (c == '#') {
      size_t e = pos_;
      while (e < n && BreakLen(e) == 0) ++e;
      Emit(TokenKind::kComment, pos_, e, line, col);
      pos_ = e;
      continue;
    }
    if (c == '\\') {
      const size_t nl = BreakLen(pos_ + 1);
      if (nl == 0) {
        return Fail(pos_ + 1 >= n ? "unexpected end of file after line continuation character"
                                  : "unexpected character after line continuation character",
                    line, col);
      }
      pos_ += 1 + nl;
      StartLine(pos_);
      continue;
    }
    line_has_tokens = true;
    if (IsIdentStart(static_cast<unsigned char>(c))) {
      size_t e = pos_;
      while (e < n && IsIdentChar(static_cast<unsigned char>(src_[e]))) ++e;
      std::string_view word = src_.substr(pos_, e - pos_);
      if (e < n && IsQuote(src_[e]) && IsStringPrefix(word)) {
        if (!ScanString(&e, HasF(word), 0)) return false;
        Emit(TokenKind::kString, pos_, e, line, col);
      } else {
        Emit(TokenKind::kName, pos_, e, line, col);
      }
      pos_ = e;
      continue;
    }
    if (IsDigit(c) || (c == '.' && pos_ + 1 < n && IsDigit(src_[pos_ + 1]))) {
      Number();
      continue;
    }
    if (IsQuote(c)) {
      size_t e = pos_;
      if (!ScanString(&e, false, 0)) return false;
      Emit(TokenKind::kString, pos_, e, line, col);
      pos_ = e;
      continue;
    }
    size_t len = 0;
    for (const char* op : kOps3) {
      if (src_.substr(pos_, 3) == op) len = 3;
    }
    for (const char* op : kOps2) {
      if (len == 0 && src_.substr(pos_, 2) == op) len = 2;
    }
    if (len == 0 && kOps1.find(c) != std::string_view::npos) {
      len = 1;
      if (std::string_view("()[]{}").find(c) != std::string_view::npos && !Bracket(c)) {
        return false;
      }
    }
    if (len == 0) {
      char buf[64];
      const unsigned char u = static_cast<unsigned char>(c);
      if (u >= 0x20 && u < 0x7f) {
        std::snprintf(buf, sizeof buf, "invalid character '%c' (U+%04X)", c, u);
      } else {
        std::snprintf(buf, sizeof buf, "invalid non-printable character U+%04X", u);
      }
      return Fail(buf, line, col);
    }
    Emit(TokenKind::kOp, pos_, pos_ + len, line, col);
    pos_ += len;
  }
  if (!brackets_.empty()) {
    const Open& open = brackets_.back();
    return Fail(std::string("'") + open.c + "' was never closed", open.line, open.col);
  }
  if (line_has_tokens) Emit(TokenKind::kNewline, n, n, line_, Col(n));
  for (size_t i = 1; i < indents_.size(); ++i) Emit(TokenKind::kDedent, n, n, line_, Col(n));
  Emit(TokenKind::kEndMarker, n, n, line_, Col(n));
  return true;
}

}  // namespace

const char* TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kName:
      return "NAME";
    case TokenKind::kNumber:
      return "NUMBER";
    case TokenKind::kString:
      return "STRING";
    case TokenKind::kOp:
      return "OP";
    case TokenKind::kNewline:
      return "NEWLINE";
    case TokenKind::kIndent:
      return "INDENT";
    case TokenKind::kDedent:
      return "DEDENT";
    case TokenKind::kComment:
      return "COMMENT";
    case TokenKind::kEndMarker:
      return "ENDMARKER";
  }
  return "?";
}

bool Tokenize(std::string_view src, std::vector<Token>* tokens, SyntaxError* error) {
  Tokenizer t(src, tokens);
  return t.Run(error);
}

}  // namespace kf::extract
