#include "legality/cpp_lexer.h"

#include <algorithm>
#include <cctype>

namespace kf::legality {
namespace {

bool IdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::vector<CppToken> LexCpp(std::string_view s) {
  std::vector<CppToken> out;
  const size_t n = s.size();
  size_t i = 0, line_start = 0;
  int line = 1;
  bool at_line_start = true;  // only whitespace so far on this line
  auto newline = [&](size_t at) {
    ++line;
    line_start = at + 1;
    at_line_start = true;
  };
  auto push = [&](CppToken::Kind k, std::string text, size_t at) {
    out.push_back(CppToken{k, std::move(text), line, static_cast<int>(at - line_start) + 1, at});
  };
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      newline(i++);
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      i += 2;
      while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
        if (s[i] == '\n') newline(i);
        ++i;
      }
      i = std::min(n, i + 2);
      continue;
    }
    const bool line_start_here = at_line_start;
    at_line_start = false;
    if (c == '#' && line_start_here) {
      // Directives: #include yields its path; others (#define bodies hold code) lex on.
      size_t k = i + 1;
      while (k < n && (s[k] == ' ' || s[k] == '\t')) ++k;
      size_t w = k;
      while (w < n && IdentChar(s[w])) ++w;
      const std::string_view word = s.substr(k, w - k);
      if (word == "include") {
        while (w < n && (s[w] == ' ' || s[w] == '\t')) ++w;
        const char close = w < n && s[w] == '<' ? '>' : '"';
        size_t e = w + 1;
        while (e < n && s[e] != close && s[e] != '\n') ++e;
        push(CppToken::Kind::kInclude, std::string(s.substr(w + 1, e - w - 1)), i);
        while (e < n && s[e] != '\n') ++e;
        i = e;
      } else if (word == "define") {
        while (w < n && (s[w] == ' ' || s[w] == '\t')) ++w;
        while (w < n && IdentChar(s[w])) ++w;  // the macro's name
        i = w;
      } else {
        i = w;
      }
      continue;
    }
    if (c == 'R' && i + 1 < n && s[i + 1] == '"') {
      // Raw string R"delim( ... )delim".
      const size_t open = s.find('(', i + 2);
      if (open != std::string_view::npos) {
        const std::string end = ")" + std::string(s.substr(i + 2, open - i - 2)) + "\"";
        size_t close = s.find(end, open);
        if (close == std::string_view::npos) close = n;
        const size_t at = i;
        const std::string body(s.substr(open + 1, close - open - 1));
        push(CppToken::Kind::kString, body, at);
        for (size_t k = i; k < std::min(n, close); ++k) {
          if (s[k] == '\n') newline(k);
        }
        i = std::min(n, close + end.size());
        continue;
      }
    }
    if (c == '"' || c == '\'') {
      size_t k = i + 1;
      std::string body;
      while (k < n && s[k] != c && s[k] != '\n') {
        if (s[k] == '\\' && k + 1 < n) body += s[k++];
        body += s[k++];
      }
      push(c == '"' ? CppToken::Kind::kString : CppToken::Kind::kNumber, body, i);
      i = k < n && s[k] == c ? k + 1 : k;
      continue;
    }
    if (IdentStart(c) || (c == ':' && i + 2 < n && s[i + 1] == ':' && IdentStart(s[i + 2]) &&
                          (out.empty() || out.back().kind != CppToken::Kind::kIdent))) {
      const size_t at = i;
      std::string name;
      if (c == ':') i += 2;  // ::cublasSgemm is cublasSgemm
      while (true) {
        while (i < n && IdentChar(s[i])) name += s[i++];
        size_t k = i;
        while (k < n && (s[k] == ' ' || s[k] == '\t')) ++k;
        if (k + 2 < n && s[k] == ':' && s[k + 1] == ':') {
          size_t m = k + 2;
          while (m < n && (s[m] == ' ' || s[m] == '\t')) ++m;
          if (m < n && IdentStart(s[m])) {
            name += "::";
            i = m;
            continue;
          }
        }
        break;
      }
      push(CppToken::Kind::kIdent, name, at);
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      const size_t at = i;
      while (i < n && (IdentChar(s[i]) || s[i] == '.' ||
                       ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E')))) {
        ++i;
      }
      push(CppToken::Kind::kNumber, std::string(s.substr(at, i - at)), at);
      continue;
    }
    static const char* const kPuncts[] = {"<<<", ">>>", "<<=", ">>=", "->", "::", "++",
                                          "--",  "+=",  "-=",  "*=",  "/=", "==", "!=",
                                          "<=",  ">=",  "&&",  "||",  "<<", ">>"};
    std::string p(1, c);
    for (const char* q : kPuncts) {
      if (s.substr(i, std::char_traits<char>::length(q)) == q) {
        p = q;
        break;
      }
    }
    push(CppToken::Kind::kPunct, p, i);
    i += p.size();
  }
  return out;
}

}  // namespace kf::legality
