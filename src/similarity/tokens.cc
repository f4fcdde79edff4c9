// Token streams with names, numbers and strings normalised, so that renaming a variable or
// changing a size does not make two programs look different.
#include <algorithm>
#include <array>
#include <string>

#include "extract/extract.h"
#include "extract/python_parse.h"
#include "extract/tokenizer.h"
#include "legality/cpp_lexer.h"
#include "similarity/similarity.h"

namespace kf::similarity {
namespace {
using extract::Token;
using extract::TokenKind;

bool IsModuleAlias(const std::string& s) {
  return s == "torch" || s == "nn" || s == "F" || s == "math";
}

bool IsDocstring(const std::vector<Token>& t, size_t i) {
  if (t[i].kind != TokenKind::kString) return false;
  bool starts = i == 0 || t[i - 1].kind == TokenKind::kNewline ||
                t[i - 1].kind == TokenKind::kIndent || t[i - 1].kind == TokenKind::kDedent;
  bool ends = i + 1 >= t.size() || t[i + 1].kind == TokenKind::kNewline ||
              t[i + 1].kind == TokenKind::kEndMarker;
  return starts && ends;
}

// A string literal that holds kernel source rather than a message or a name.
bool LooksLikeKernelSource(const std::string& v) {
  return std::count(v.begin(), v.end(), '\n') >= 2 &&
         (v.find('{') != std::string::npos || v.find(';') != std::string::npos);
}

constexpr std::array kCppKeywords = {
    "auto",     "bool",     "break",  "case",     "char",     "const",     "constexpr",
    "continue", "default",  "do",     "double",   "else",     "extern",    "float",
    "for",      "if",       "inline", "int",      "long",     "namespace", "return",
    "short",    "signed",   "sizeof", "static",   "struct",   "switch",    "template",
    "typename", "unsigned", "using",  "void",     "volatile", "while",     "int64_t",
    "int32_t",  "size_t",   "half",   "uint32_t", "uint64_t", "unroll",    "pragma"};
constexpr std::array kCudaBuiltins = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"};

template <size_t N>
bool In(const std::array<const char*, N>& list, const std::string& s) {
  return std::any_of(list.begin(), list.end(), [&](const char* k) { return s == k; });
}

void AppendCppTokens(const std::string& src, std::vector<std::string>* out) {
  auto toks = legality::LexCpp(src);
  for (size_t i = 0; i < toks.size(); ++i) {
    const auto& t = toks[i];
    using K = legality::CppToken::Kind;
    switch (t.kind) {
      case K::kIdent: {
        bool keep = In(kCppKeywords, t.text) || In(kCudaBuiltins, t.text) ||
                    t.text.find("::") != std::string::npos || t.text.rfind("__", 0) == 0;
        out->push_back(keep ? t.text : "ID");
        break;
      }
      case K::kNumber:
        out->push_back("NUM");
        break;
      case K::kString:
        out->push_back("STR");
        break;
      case K::kInclude:
        out->push_back("#include<" + t.text + ">");
        break;
      case K::kPunct:
        out->push_back(t.text);
        break;
    }
  }
}

// The Python tokens of `source` normalised; kernel-source strings lexed as C++ when `kernels`.
std::vector<std::string> Normalize(std::string_view source, bool kernels) {
  std::vector<Token> toks;
  extract::SyntaxError err;
  extract::Tokenize(source, &toks, &err);  // on an error: the tokens read before it
  std::vector<std::string> out;
  out.reserve(toks.size());
  for (size_t i = 0; i < toks.size(); ++i) {
    const Token& t = toks[i];
    switch (t.kind) {
      case TokenKind::kComment:
      case TokenKind::kEndMarker:
        break;
      case TokenKind::kNewline:
        out.push_back("\n");
        break;
      case TokenKind::kIndent:
        out.push_back(">");
        break;
      case TokenKind::kDedent:
        out.push_back("<");
        break;
      case TokenKind::kNumber:
        out.push_back("NUM");
        break;
      case TokenKind::kOp:
        out.push_back(t.text);
        break;
      case TokenKind::kName: {
        bool attr = i > 0 && toks[i - 1].kind == TokenKind::kOp && toks[i - 1].text == ".";
        bool keep = attr || extract::IsPythonKeyword(t.text) || IsModuleAlias(t.text);
        out.push_back(keep ? t.text : "ID");
        break;
      }
      case TokenKind::kString: {
        if (IsDocstring(toks, i)) {
          // Drop the statement: the string and its NEWLINE.
          if (i + 1 < toks.size() && toks[i + 1].kind == TokenKind::kNewline) ++i;
          break;
        }
        if (kernels) {
          auto v = extract::DecodeStringLiteral(t.text);
          if (v.resolved && !v.is_bytes && LooksLikeKernelSource(v.value)) {
            AppendCppTokens(v.value, &out);
            break;
          }
        }
        out.push_back("STR");
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> NormalizedPythonTokens(std::string_view source) {
  return Normalize(source, false);
}

std::vector<std::string> KernelTokens(std::string_view candidate) {
  extract::Candidate c = extract::Extract(candidate);
  return Normalize(c.code.empty() ? candidate : std::string_view(c.code), true);
}

}  // namespace kf::similarity
