#include <sstream>

#include "eval/impl.h"
#include "legality/cpp_lexer.h"

namespace kf::eval {
namespace {

using legality::CppToken;

bool Opens(const CppToken& t) {
  return t.kind == CppToken::Kind::kPunct && (t.text == "(" || t.text == "[" || t.text == "{");
}
bool Closes(const CppToken& t) {
  return t.kind == CppToken::Kind::kPunct && (t.text == ")" || t.text == "]" || t.text == "}");
}

// `text` on one line: every run of whitespace one space.
std::string OneLine(const std::string& text) {
  std::istringstream in(text);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

}  // namespace

std::optional<StreamedCheck> FindStreamedCheck(const extract::Candidate& c) {
  for (const extract::InlineCall& call : c.inline_calls) {
    std::vector<const extract::SourceText*> sources;  // g++ built the first, nvcc the second
    for (const auto& s : call.cpp_sources) sources.push_back(&s);
    for (const auto& s : call.cuda_sources) sources.push_back(&s);
    for (const extract::SourceText* source : sources) {
      const extract::SourceText& src = *source;
      const std::vector<CppToken> toks = legality::LexCpp(src.text);
      for (size_t i = 0; i + 1 < toks.size(); ++i) {
        if (toks[i].kind != CppToken::Kind::kIdent || toks[i].text != "TORCH_CHECK" ||
            toks[i + 1].text != "(") {
          continue;
        }
        // To the matching parenthesis: the commas outside nested brackets separate its parts
        // (a comma inside a string literal is inside a kString token).
        int depth = 0, commas = 0;
        size_t j = i + 2;
        for (; j < toks.size(); ++j) {
          if (Opens(toks[j])) {
            ++depth;
          } else if (Closes(toks[j])) {
            if (depth-- == 0) break;
          } else if (depth == 0 && toks[j].kind == CppToken::Kind::kPunct) {
            if (toks[j].text == ",") ++commas;
            if (toks[j].text == ";") break;  // not a call we can read (a macro's text)
          }
        }
        if (j == toks.size() || toks[j].text != ")" || commas < 2) continue;
        StreamedCheck found;
        found.text = OneLine(src.text.substr(toks[i].offset, toks[j].offset + 1 - toks[i].offset));
        const size_t l = static_cast<size_t>(toks[i].line - 1);
        if (l < src.line_map.size()) found.line = src.line_map[l];
        return found;
      }
    }
  }
  return std::nullopt;
}

void HintStreamedCheck(const extract::Candidate& c, Diagnostic* d) {
  if (d->code != "crash" || d->message.find("signal 11") == std::string::npos) return;
  std::optional<StreamedCheck> check = FindStreamedCheck(c);
  if (!check) return;
  std::string text = check->text;
  if (text.size() > 120) text = text.substr(0, 117) + "...";
  d->hint += std::string(d->hint.empty() ? "" : " ") + "Or a check that failed: `" + text + "`" +
             (check->line > 0 ? " (line " + std::to_string(check->line) + ")" : "") +
             " streams a value into its message, and where the C++ compiler links extensions " +
             "with a static libstdc++ of their own (the GPU machine's, 2026-12-07), formatting " +
             "a number in extension code ends the process like this instead of raising; give " +
             "the check one string literal as its message to see which it is.";
}

}  // namespace kf::eval
