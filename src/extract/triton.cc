#include "extract/triton.h"

#include <map>
#include <regex>

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
  if (!std::regex_search(message.begin(), message.end(), mt, kAt)) return 0;
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
