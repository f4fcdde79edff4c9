// A Python tokenizer for untrusted candidate text. Internal to kforge: extract uses it, and the
// static rules walk its tokens. It follows CPython's tokenizer closely enough to find statements,
// brackets, strings and indentation, and never crashes or loops on arbitrary bytes: every
// problem is a located SyntaxError.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kf::extract {

enum class TokenKind {
  kName,
  kNumber,
  kString,
  kOp,
  kNewline,  // end of a logical line (never inside brackets or after a backslash continuation)
  kIndent,
  kDedent,
  kComment,
  kEndMarker,
};

const char* TokenKindName(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEndMarker;
  std::string text;  // the raw source bytes (a string keeps its prefix and quotes)
  int line = 0;      // 1-based, where the token starts
  int col = 0;       // 1-based byte column
  int end_line = 0;  // line of the token's last byte (differs for multi-line strings)
};

// The operator token `op` (e.g. "(" or "="), an opening bracket, a closing bracket.
inline bool IsOp(const Token& t, std::string_view op) {
  return t.kind == TokenKind::kOp && t.text == op;
}
inline bool IsOpen(const Token& t) {
  return t.kind == TokenKind::kOp && (t.text == "(" || t.text == "[" || t.text == "{");
}
inline bool IsClose(const Token& t) {
  return t.kind == TokenKind::kOp && (t.text == ")" || t.text == "]" || t.text == "}");
}

// A located error in the candidate's code (lines and columns of the tokenized text).
struct SyntaxError {
  std::string message;
  int line = 0;
  int col = 0;
};

// Python limits nesting to 200 levels; so do we, which also bounds recursion in every later
// pass over the tokens.
inline constexpr int kMaxBracketDepth = 200;

// Tokenizes `src` (UTF-8 or any bytes; "\n", "\r\n" and "\r" all end a line). On success fills
// `tokens` ending with kEndMarker and returns true; otherwise fills `error` and returns false.
// Blank and comment-only lines produce no kNewline (CPython's NL tokens are dropped).
bool Tokenize(std::string_view src, std::vector<Token>* tokens, SyntaxError* error);

// The value of one string-literal token.
struct StringValue {
  bool resolved = false;  // false: an f-string with placeholders, or an escape we cannot decode
  std::string why;        // when !resolved
  bool is_bytes = false;
  std::string value;  // UTF-8 (bytes literals: the raw bytes)
  // line_offsets[i]: how many source lines after the token's first line value line i begins
  // (value lines are split on '\n'; always count('\n') + 1 entries).
  std::vector<int> line_offsets;
};

// Decodes a kString token's raw text: prefixes r/b/u/f in any case and order Python allows,
// all quote styles, escapes (\n \t \\ \' \" \xNN \uNNNN \UNNNNNNNN octal, line continuation),
// raw strings, and f-strings without placeholders ("{{" and "}}" become braces).
StringValue DecodeStringLiteral(std::string_view raw);

}  // namespace kf::extract
