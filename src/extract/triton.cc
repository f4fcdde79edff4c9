#include "extract/triton.h"

#include <map>
#include <regex>

#include "extract/tokenizer.h"

namespace kf::extract {
namespace {

// Import aliases: the name a statement binds -> the module path it stands for. The last
// binding wins, as it would at run time for module-level imports.
std::map<std::string, std::string> Aliases(const ParsedModule& m) {
  std::map<std::string, std::string> alias;
  for (const Import& im : m.imports) {
    if (im.module.empty() || im.module[0] == '.' || im.name == "*") continue;
    if (im.name.empty()) {
      // `import a.b` binds a (to the package a); `import a.b as c` binds c to a.b.
      const bool plain = im.alias == im.module.substr(0, im.module.find('.'));
      alias[im.alias] = plain ? im.alias : im.module;
    } else {
      alias[im.alias] = im.module + "." + im.name;
    }
  }
  return alias;
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    out.emplace_back(text.substr(b, e - b));
    if (e == text.size()) break;
    b = e + 1;
  }
  return out;
}

bool IsJit(const std::string& path) {
  return path == "triton.jit" || path == "triton.runtime.jit" || path == "triton.runtime.jit.jit";
}

bool IsAutotune(const std::string& path) {
  return path == "triton.autotune" || path == "triton.runtime.autotune" ||
         path == "triton.runtime.autotuner.autotune";
}

// DecoratorPath with the module's import aliases already gathered.
std::string DecoratorPathWith(const ParsedModule& m, int stmt,
                              const std::map<std::string, std::string>& aliases) {
  const Statement& s = m.statements[static_cast<size_t>(stmt)];
  if (s.end - s.begin < 2 || !IsOp(m.tokens[s.begin], "@")) return "";
  std::string chain;
  for (int i = s.begin + 1; i < s.end; i += 2) {
    if (m.tokens[i].kind != TokenKind::kName) break;
    chain += (chain.empty() ? "" : ".") + m.tokens[i].text;
    if (i + 1 >= s.end || !IsOp(m.tokens[i + 1], ".")) break;
  }
  if (chain.empty()) return "";
  const size_t dot = chain.find('.');
  auto it = aliases.find(chain.substr(0, dot));
  if (it == aliases.end()) return "";
  return dot == std::string::npos ? it->second : it->second + chain.substr(dot);
}

// What Triton's dependency finder refused, by name, from an error that has no `at L:C:` (it
// runs before the compiler, when the kernel's cache key is first computed; Triton 3.x jit.py):
// "Unsupported function referenced: " + str(value) ("<built-in method NAME of ...>",
// "<built-in function NAME>", "<function QUAL.NAME at 0x...>", "<bound method QUAL.NAME of
// ...>", "<method 'NAME' of ...>", "<ufunc 'NAME'>", a bare dotted name such as torch.ops'
// "aten.relu"), or the inner kernel of "Global variable G has value ... but inner kernel NAME
// has conflicting value ...". "" when it names nothing (a lambda, a callable object).
std::string RefusedName(std::string_view message) {
  static const std::regex kUnsupported(R"(Unsupported function referenced: *(\S[^\n]*))");
  static const std::regex kInner(R"(but inner kernel ([A-Za-z_]\w*) has conflicting value)");
  static const std::regex kForms(
      R"(<(?:built-in method|built-in function|function|bound method|cyfunction) )"
      R"(([A-Za-z_](?:[\w.]|<\w+>)*))"
      R"(|<(?:method|ufunc|method-wrapper|slot wrapper) '([A-Za-z_]\w*)')"
      R"(|^([A-Za-z_][\w.]*)\s*$)");
  std::match_results<std::string_view::const_iterator> mt;
  if (std::regex_search(message.begin(), message.end(), mt, kInner)) return mt[1].str();
  if (!std::regex_search(message.begin(), message.end(), mt, kUnsupported)) return "";
  const std::string value = Trim(mt[1].str());
  std::smatch f;
  if (!std::regex_search(value, f, kForms)) return "";
  std::string name = f[1].matched ? f[1].str() : f[2].matched ? f[2].str() : f[3].str();
  name = name.substr(name.rfind('.') + 1);        // a qualified name's last part
  if (name.empty() || name[0] == '<') return "";  // "<lambda>"
  return name;
}

// Where a kernel's body (the tokens after its `def ...:` header, through end_line) uses `name`:
// first as a call (`name(` or `.name(`), else at any mention. Fills *col (1-based) with the
// column of `name`; 0 when the body never names it.
int NameLine(const std::vector<Token>& t, const TritonKernel& k, const std::string& name,
             bool calls_only, int* col) {
  size_t i = 0;
  while (i < t.size() && t[i].line < k.def_line) ++i;
  for (int depth = 0; i < t.size(); ++i) {  // past the header's `:` (annotations hold colons)
    if (IsOpen(t[i])) ++depth;
    if (IsClose(t[i])) --depth;
    if (depth == 0 && IsOp(t[i], ":")) break;
  }
  for (++i; i < t.size() && t[i].line <= k.end_line; ++i) {
    if (t[i].kind != TokenKind::kName || t[i].text != name) continue;
    const bool call = i + 1 < t.size() && IsOp(t[i + 1], "(");
    if (calls_only && !call) continue;
    if (col) *col = t[i].col;
    return t[i].line;
  }
  return 0;
}

// The line that uses what `message` says Triton refused (RefusedName): in the launched kernel
// first, then its helpers; calls before other mentions. 0 when nothing fits.
int RefusedNameLine(std::string_view code, const std::vector<TritonKernel>& kernels,
                    std::string_view kernel, std::string_view message, int* col) {
  const std::string name = RefusedName(message);
  std::vector<Token> tokens;
  SyntaxError err;
  if (name.empty() || !Tokenize(code, &tokens, &err)) return 0;
  for (bool calls_only : {true, false}) {
    for (bool launched : {true, false}) {
      for (const TritonKernel& k : kernels) {
        if ((k.name == kernel) != launched) continue;
        if (int line = NameLine(tokens, k, name, calls_only, col)) return line;
      }
    }
  }
  return 0;
}

}  // namespace

std::string DecoratorPath(const ParsedModule& m, int stmt) {
  return DecoratorPathWith(m, stmt, Aliases(m));
}

std::vector<TritonKernel> TritonKernels(const ParsedModule& m) {
  std::vector<TritonKernel> out;
  const std::map<std::string, std::string> aliases = Aliases(m);
  const int n = static_cast<int>(m.statements.size());
  for (int si = 0; si < n; ++si) {
    const Statement& s = m.statements[static_cast<size_t>(si)];
    int k = s.begin;
    if (k < s.end && m.tokens[k].text == "async") ++k;
    if (!s.is_header || k + 1 >= s.end || m.tokens[k].text != "def") continue;
    TritonKernel kern;
    bool jit = false;
    // Decorators are the statements right above, at the same level.
    for (int d = si - 1; d >= 0; --d) {
      const Statement& ds = m.statements[static_cast<size_t>(d)];
      if (ds.parent != s.parent || !IsOp(m.tokens[ds.begin], "@")) break;
      const std::string path = DecoratorPathWith(m, d, aliases);
      jit = jit || IsJit(path);
      kern.autotuned = kern.autotuned || IsAutotune(path);
      kern.first_line = ds.line;
    }
    if (!jit) continue;
    kern.name = m.tokens[k + 1].text;
    kern.def_line = s.line;
    kern.end_line = s.end_line;
    kern.def_indent = m.tokens[s.begin].col - 1;
    kern.stmt = si;
    out.push_back(std::move(kern));
  }
  return out;
}

int TritonErrorLine(std::string_view code, const std::vector<TritonKernel>& kernels,
                    std::string_view kernel, std::string_view message, int* col) {
  static const std::regex kAt(R"(at (\d+):(\d+):)");
  std::match_results<std::string_view::const_iterator> mt;
  if (!std::regex_search(message.begin(), message.end(), mt, kAt)) {
    return RefusedNameLine(code, kernels, kernel, message, col);
  }
  const int rel = std::stoi(mt[1].str());
  const int rel_col = std::stoi(mt[2].str());
  // The excerpt: the source lines after `at L:C:` up to the caret line; its last one is the
  // line at fault.
  const std::vector<std::string> after =
      Lines(message.substr(static_cast<size_t>(mt.position(0) + mt.length(0))));
  std::string culprit, last;
  for (const std::string& l : after) {
    const std::string t = Trim(l);
    if (t == "^") {
      culprit = last;
      break;
    }
    if (!t.empty()) last = t;
  }
  const std::vector<std::string> lines = Lines(code);
  auto fits = [&](const TritonKernel& k) {
    const int line = k.def_line + rel - 1;
    if (rel < 1 || line > k.end_line || line > static_cast<int>(lines.size())) return 0;
    if (!culprit.empty() && Trim(lines[static_cast<size_t>(line - 1)]) != culprit) return 0;
    if (col) *col = rel_col + k.def_indent + 1;
    return line;
  };
  for (const TritonKernel& k : kernels) {  // the kernel that was launched first
    if (k.name == kernel) {
      if (int line = fits(k)) return line;
    }
  }
  for (const TritonKernel& k : kernels) {  // then the helpers it may call
    if (k.name != kernel) {
      if (int line = fits(k)) return line;
    }
  }
  if (culprit.empty()) return 0;
  culprit.clear();  // the excerpt matched nowhere (edited source?): trust the launched kernel
  for (const TritonKernel& k : kernels) {
    if (k.name == kernel) return fits(k);
  }
  return 0;
}

}  // namespace kf::extract
