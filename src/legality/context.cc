#include "legality/context.h"

#include <algorithm>
#include <tuple>

#include "common/rules.h"

namespace kf::legality {

bool IsName(const Token& t) {
  return t.kind == TokenKind::kName && !extract::IsPythonKeyword(t.text);
}
bool IsKeyword(const Token& t, std::string_view kw) {
  return t.kind == TokenKind::kName && t.text == kw;
}

Context::Context(const extract::Candidate& c, const LegalityOptions& opt,
                 std::vector<Diagnostic>* out)
    : c_(c), opt_(opt), out_(out) {}

std::string Context::Hint(const char* code) const {
  return RuleHint(code, backend::FamilyName(c_.family));
}

bool Context::Parse() {
  extract::SyntaxError err;
  if (!extract::ParseModule(c_.code, &m_, &err)) return false;
  CollectBindings();
  return true;
}

bool Context::IsChainStart(int i) const {
  const auto& t = m_.tokens;
  return IsName(t[i]) && !(i > 0 && IsOp(t[i - 1], "."));
}

std::string Context::Chain(int i, int* end) const {
  const auto& t = m_.tokens;
  std::string s = t[i].text;
  int k = i + 1;
  while (k + 1 < static_cast<int>(t.size()) && IsOp(t[k], ".") &&
         t[k + 1].kind == TokenKind::kName) {
    s += "." + t[k + 1].text;
    k += 2;
  }
  *end = k;
  return s;
}

std::string Context::AliasTarget(const std::string& alias) const {
  auto it = alias_.find(alias);
  return it == alias_.end() ? "" : it->second;
}

std::string Context::Canonical(const std::string& chain) const {
  const size_t dot = chain.find('.');
  const std::string target = AliasTarget(chain.substr(0, dot));
  if (target.empty()) return "";
  return dot == std::string::npos ? target : target + chain.substr(dot);
}

void Context::CollectBindings() {
  const auto& t = m_.tokens;
  for (const extract::Import& im : m_.imports) {
    bound_.insert(im.alias);
    if (im.name == "*") {
      if (im.module == "torch" || im.module.rfind("torch.", 0) == 0) star_torch_ = true;
      continue;
    }
    if (im.module.empty() || im.module[0] == '.') continue;  // relative: not a library
    if (im.name.empty()) {
      // `import a.b` binds `a` to the package a; `import a.b as c` binds c to a.b.
      alias_[im.alias] = im.alias == im.module.substr(0, im.module.find('.')) &&
                                 im.module.find('.') != std::string::npos
                             ? im.alias
                             : im.module;
    } else {
      alias_[im.alias] = im.module + "." + im.name;
    }
  }
  // Plain aliases (`F = torch.nn.functional`, `mm = F.linear`), chained up to a few levels.
  for (int round = 0; round < 3; ++round) {
    for (const extract::Assignment& a : m_.assignments) {
      if (a.value_begin < 0 || a.augmented || !IsChainStart(a.value_begin)) continue;
      int end = 0;
      const std::string chain = Chain(a.value_begin, &end);
      if (end != a.value_end) continue;
      const std::string canon = Canonical(chain);
      if (!canon.empty() && a.name != chain) alias_[a.name] = canon;
    }
  }
  for (const extract::Assignment& a : m_.assignments) bound_.insert(a.name);
  for (const extract::Statement& s : m_.statements) {
    const int n = s.end;
    int k = s.begin;
    if (IsKeyword(t[k], "async")) ++k;
    if (k + 1 < n && (IsKeyword(t[k], "def") || IsKeyword(t[k], "class"))) {
      bound_.insert(t[k + 1].text);
    }
    if (IsKeyword(t[k], "for")) {
      for (int i = k + 1; i < n && !IsKeyword(t[i], "in"); ++i) {
        if (IsName(t[i])) bound_.insert(t[i].text);
      }
    }
    // Parameters, `as` targets and lambda parameters: any name right after `(`, `,`, `*`,
    // `**`, `as` or `lambda` that is followed by `,` `)` `=` `:` counts; over-approximating
    // binding only makes the builtin rules quieter.
    for (int i = s.begin + 1; i + 1 < n; ++i) {
      if (!IsName(t[i])) continue;
      const Token& p = t[i - 1];
      const Token& q = t[i + 1];
      const bool after = IsOp(p, "(") || IsOp(p, ",") || IsOp(p, "*") || IsOp(p, "**") ||
                         IsKeyword(p, "as") || IsKeyword(p, "lambda");
      const bool before = IsOp(q, ",") || IsOp(q, ")") || IsOp(q, "=") || IsOp(q, ":");
      const bool is_def = IsKeyword(t[k], "def") || IsKeyword(t[k], "lambda");
      if (after && before && (is_def || IsKeyword(p, "as") || IsKeyword(p, "lambda"))) {
        bound_.insert(t[i].text);
      }
    }
    for (int i = s.begin; i + 1 < n; ++i) {
      if (IsKeyword(t[i], "lambda") || IsKeyword(t[i], "as")) {
        for (int j = i + 1; j < n && !IsOp(t[j], ":"); ++j) {
          if (IsName(t[j])) bound_.insert(t[j].text);
          if (IsKeyword(t[i], "as")) break;
        }
      }
    }
  }
}

std::string Context::CodeLine(int line) const {
  const std::string& text = c_.code;
  size_t b = 0;
  for (int n = 1; n < line; ++n) {
    b = text.find('\n', b);
    if (b == std::string::npos) return "";
    ++b;
  }
  if (line < 1 || b > text.size()) return "";
  size_t e = text.find('\n', b);
  if (e == std::string::npos) e = text.size();
  std::string s = text.substr(b, e - b);
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

void Context::Report(const char* code, int line, int col, std::string message, std::string hint,
                     Severity severity) {
  ReportSubmitted(code, line > 0 ? line + c_.first_line - 1 : 0, col, std::move(message),
                  std::move(hint), severity);
}

void Context::ReportSubmitted(const char* code, int line, int col, std::string message,
                              std::string hint, Severity severity) {
  Diagnostic d;
  d.stage = "static";
  d.code = code;
  d.severity = severity;
  d.message = std::move(message);
  d.line = line;
  d.col = col;
  d.excerpt = line > 0 ? CodeLine(line - c_.first_line + 1) : "";
  d.hint = std::move(hint);
  out_->push_back(std::move(d));
}

void Context::ReportKernelGraph(int line, int col, const std::string& use) {
  if (!opt_.allow_graphs) {
    ReportSubmitted("H07", line, col, use + " is not allowed (H07)", Hint("H07"));
    return;
  }
  ReportSubmitted(
      "H07_graph", line, col,
      "allowed under the kernelbench policy: " + use + ", a CUDA graph, judged by what runs",
      Hint("H07_graph"), Severity::kInfo);
}

std::vector<Diagnostic> Check(const extract::Candidate& c, const LegalityOptions& opt) {
  std::vector<Diagnostic> out;
  Context ctx(c, opt, &out);
  if (!ctx.Parse()) return out;
  CheckPythonRules(ctx);
  CheckKernelSources(ctx);
  if (ctx.triton()) CheckTritonKernels(ctx);
  CheckForward(ctx);
  // One finding per line and code: the first pass to see it gave the most specific message.
  std::vector<Diagnostic> unique;
  for (Diagnostic& d : out) {
    const bool seen = std::any_of(unique.begin(), unique.end(), [&](const Diagnostic& u) {
      return u.line == d.line && (u.code == d.code || (u.col == d.col && d.col > 0));
    });
    if (!seen) unique.push_back(std::move(d));
  }
  std::stable_sort(unique.begin(), unique.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.col) < std::tie(b.line, b.col);
  });
  return unique;
}

}  // namespace kf::legality
