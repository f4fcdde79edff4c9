// DecodeStringLiteral: the value of one Python string-literal token, with the source line each
// line of the value came from (so compiler errors in kernel sources map back to the candidate).
#include <cstdint>

#include "common/hash.h"
#include "extract/tokenizer.h"

namespace kf::extract {
namespace {

// Encodes a code point as UTF-8. Lone surrogates are encoded as three bytes like any other
// code point: Python allows them in str, and we only need a faithful byte string.
void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class Decoder {
 public:
  Decoder(std::string_view body, bool raw, bool bytes, bool f, StringValue* v)
      : body_(body), raw_(raw), bytes_(bytes), f_(f), v_(v) {}

  void Run() {
    v_->resolved = true;
    v_->line_offsets = {0};
    size_t j = 0;
    while (j < body_.size() && v_->resolved) j = Step(j);
  }

 private:
  size_t BreakLen(size_t j) const {
    if (j >= body_.size()) return 0;
    if (body_[j] == '\n') return 1;
    if (body_[j] == '\r') return j + 1 < body_.size() && body_[j + 1] == '\n' ? 2 : 1;
    return 0;
  }
  void Newline() {
    v_->value.push_back('\n');
    v_->line_offsets.push_back(src_line_);
  }
  void Unresolved(std::string why) {
    v_->resolved = false;
    v_->why = std::move(why);
  }
  void CodePoint(uint32_t cp) {
    if (bytes_) {
      v_->value.push_back(static_cast<char>(cp & 0xFF));
    } else if (cp == '\n') {
      Newline();
    } else {
      AppendUtf8(cp, &v_->value);
    }
  }

  // Decodes what starts at body_[j]; returns the index after it.
  size_t Step(size_t j) {
    const char c = body_[j];
    if (const size_t nl = BreakLen(j); nl != 0) {
      ++src_line_;  // a real line break; "\r\n" in the source is one '\n' in the value
      Newline();
      return j + nl;
    }
    if (f_ && (c == '{' || c == '}')) {
      if (j + 1 < body_.size() && body_[j + 1] == c) {
        v_->value.push_back(c);
        return j + 2;
      }
      if (c == '{') Unresolved("an f-string with placeholders");
      v_->value.push_back(c);
      return j + 1;
    }
    if (c != '\\' || j + 1 >= body_.size()) {
      v_->value.push_back(c);
      return j + 1;
    }
    return Escape(j);
  }

  size_t Escape(size_t j) {
    const char d = body_[j + 1];
    if (const size_t nl = BreakLen(j + 1); nl != 0) {
      ++src_line_;  // a continuation: raw strings keep it, others drop both characters
      if (raw_) {
        v_->value.push_back('\\');
        Newline();
      }
      return j + 1 + nl;
    }
    if (raw_) {
      v_->value.push_back('\\');
      // A brace after a backslash still opens a placeholder in rf-strings.
      if (f_ && (d == '{' || d == '}')) return j + 1;
      v_->value.push_back(d);
      return j + 2;
    }
    switch (d) {
      case '\\':
      case '\'':
      case '"':
        v_->value.push_back(d);
        return j + 2;
      case 'a':
        v_->value.push_back('\a');
        return j + 2;
      case 'b':
        v_->value.push_back('\b');
        return j + 2;
      case 'f':
        v_->value.push_back('\f');
        return j + 2;
      case 'n':
        Newline();
        return j + 2;
      case 'r':
        v_->value.push_back('\r');
        return j + 2;
      case 't':
        v_->value.push_back('\t');
        return j + 2;
      case 'v':
        v_->value.push_back('\v');
        return j + 2;
      default:
        break;
    }
    if (d >= '0' && d <= '7') {
      uint32_t cp = 0;
      size_t k = j + 1;
      for (int i = 0; i < 3 && k < body_.size() && body_[k] >= '0' && body_[k] <= '7'; ++i, ++k) {
        cp = cp * 8 + static_cast<uint32_t>(body_[k] - '0');
      }
      CodePoint(cp);
      return k;
    }
    const int digits = d == 'x' ? 2 : (!bytes_ && d == 'u') ? 4 : (!bytes_ && d == 'U') ? 8 : 0;
    if (digits > 0) {
      uint32_t cp = 0;
      for (int i = 0; i < digits; ++i) {
        const size_t k = j + 2 + static_cast<size_t>(i);
        const int h = k < body_.size() ? HexDigit(body_[k]) : -1;
        if (h < 0) {
          Unresolved(std::string("a truncated \\") + d + " escape");
          return body_.size();
        }
        cp = cp * 16 + static_cast<uint32_t>(h);
      }
      if (cp > 0x10FFFF) {
        Unresolved("an escape beyond U+10FFFF");
        return body_.size();
      }
      CodePoint(cp);
      return j + 2 + static_cast<size_t>(digits);
    }
    if (!bytes_ && d == 'N') {
      Unresolved("a \\N{...} escape");  // needs the Unicode name table
      return body_.size();
    }
    v_->value.push_back('\\');  // unknown escapes stay as written, as in Python
    return j + 1;
  }

  std::string_view body_;
  bool raw_, bytes_, f_;
  StringValue* v_;
  int src_line_ = 0;
};

}  // namespace

StringValue DecodeStringLiteral(std::string_view raw) {
  StringValue v;
  v.line_offsets = {0};
  bool r = false, f = false;
  size_t i = 0;
  for (; i < raw.size() && i < 2 && raw[i] != '\'' && raw[i] != '"'; ++i) {
    const char c = static_cast<char>(raw[i] | 0x20);
    if (c == 'r') r = true;
    if (c == 'f') f = true;
    if (c == 'b') v.is_bytes = true;
  }
  if (i >= raw.size() || (raw[i] != '\'' && raw[i] != '"')) {
    v.why = "not a string literal";
    return v;
  }
  const char q = raw[i];
  const bool triple = raw.size() >= i + 6 && raw[i + 1] == q && raw[i + 2] == q;
  const size_t quote = triple ? 3 : 1;
  if (raw.size() < i + 2 * quote) {
    v.why = "not a complete string literal";
    return v;
  }
  Decoder d(raw.substr(i + quote, raw.size() - i - 2 * quote), r, v.is_bytes, f, &v);
  d.Run();
  return v;
}

}  // namespace kf::extract
