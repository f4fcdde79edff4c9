#include "extract/extract.h"

#include <algorithm>

#include "extract/fence.h"
#include "extract/load_inline.h"
#include "extract/python_parse.h"
#include "extract/resolve.h"

namespace kf::extract {
namespace {

constexpr const char* kReturnOneFile =
    "Return one Python file defining class ModelNew(nn.Module), in a single ```python fenced "
    "block, that builds its kernels with torch.utils.cpp_extension.load_inline.";

// Line `line` (1-based) of `text`, without its line break; empty when out of range.
std::string LineText(std::string_view text, int line) {
  size_t b = 0;
  for (int n = 1; n < line; ++n) {
    b = text.find('\n', b);
    if (b == std::string_view::npos) return "";
    ++b;
  }
  if (line < 1 || b > text.size()) return "";
  size_t e = text.find('\n', b);
  if (e == std::string_view::npos) e = text.size();
  std::string_view s = text.substr(b, e - b);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return std::string(s);
}

Diagnostic Error(std::string code, std::string message, std::string hint) {
  Diagnostic d;
  d.stage = "extract";
  d.code = std::move(code);
  d.severity = Severity::kError;
  d.message = std::move(message);
  d.hint = std::move(hint);
  return d;
}

// Python treats a lone '\r' as a line break and so does our tokenizer, but fence and excerpt
// handling count '\n' only; turning lone '\r' into '\n' keeps every line number the same.
std::string NormalizeLoneCr(std::string_view text) {
  std::string out(text);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\r' && (i + 1 == out.size() || out[i + 1] != '\n')) out[i] = '\n';
  }
  return out;
}

SourceText ToSourceText(const LinedString& s, int line_offset) {
  SourceText t;
  t.text = s.text;
  t.line_map = s.LineMap();
  for (int& l : t.line_map) {
    if (l > 0) l += line_offset;
  }
  return t;
}

// `ModelNew = Name` at module level, Name a module-level class: ModelNew is that class. The last
// such binding wins, as it would when the module runs; any other binding of ModelNew (a call,
// an expression) is not followed.
void AliasedModelNew(const ParsedModule& m, int offset, Candidate* c) {
  for (const Assignment& a : m.assignments) {
    if (a.name != "ModelNew" || m.statements[static_cast<size_t>(a.stmt)].parent != -1) continue;
    c->has_model_new = false;
    if (a.value_begin < 0 || a.value_end != a.value_begin + 1) continue;
    const std::string& target = m.tokens[static_cast<size_t>(a.value_begin)].text;
    for (const ClassDef& k : m.classes) {
      if (k.name != target) continue;
      c->has_model_new = true;
      c->model_new_line = a.line + offset;
      c->model_new_class = target;
    }
  }
}

}  // namespace

bool Candidate::ok() const {
  return std::none_of(diagnostics.begin(), diagnostics.end(),
                      [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

Candidate Extract(std::string_view submitted_raw, std::optional<backend::Family> family) {
  const std::string submitted = NormalizeLoneCr(submitted_raw);
  Candidate c;
  std::string body;
  int body_line = 1;
  if (FirstFencedBlock(submitted, &body, &body_line)) {
    c.code = std::move(body);
    c.first_line = body_line;
    c.from_reply = true;
  } else if (!LooksLikePython(submitted)) {
    Diagnostic d =
        Error("no_code_block", "the reply has no fenced code block and no Python code in it",
              kReturnOneFile);
    d.line = 1;
    d.excerpt = LineText(submitted, 1);
    c.diagnostics.push_back(std::move(d));
    return c;
  } else {
    c.code = submitted;
  }
  const int offset = c.first_line - 1;  // code line + offset = submitted line

  ParsedModule m;
  SyntaxError err;
  if (!ParseModule(c.code, &m, &err)) {
    Diagnostic d = Error("syntax_error", err.message,
                         "Fix the Python syntax at line " + std::to_string(err.line + offset) +
                             " (" + err.message + "); " + kReturnOneFile);
    d.line = err.line + offset;
    d.col = err.col;
    d.excerpt = LineText(submitted, d.line);
    c.diagnostics.push_back(std::move(d));
    return c;
  }

  for (const ClassDef& k : m.classes) {
    if (k.name == "ModelNew" && !c.has_model_new) {
      c.has_model_new = true;
      c.model_new_line = k.line + offset;
    }
  }
  if (!c.has_model_new) AliasedModelNew(m, offset, &c);

  const Evaluator eval(m);
  const std::vector<std::string> names = LoadInlineNames(m);
  for (const Call& call : m.calls) {
    if (!IsLoadInlineCall(call, names)) continue;
    const ResolvedCall r = ResolveLoadInline(m, eval, call);
    InlineCall ic;
    ic.line = call.line + offset;
    ic.resolved = r.resolved;
    ic.unresolved_why = r.why;
    if (r.resolved) {
      ic.spec = r.spec;
      for (const LinedString& s : r.cpp_sources) ic.cpp_sources.push_back(ToSourceText(s, offset));
      for (const LinedString& s : r.cuda_sources) {
        ic.cuda_sources.push_back(ToSourceText(s, offset));
      }
    } else {
      // Not an error: the run-time fallback reports the real arguments. Logged for the curious.
      Diagnostic d;
      d.stage = "extract";
      d.code = "unresolved_load_inline";
      d.severity = Severity::kInfo;
      d.message = "load_inline arguments could not be resolved statically: " + r.why;
      d.line = ic.line;
      d.col = call.col;
      d.excerpt = LineText(submitted, ic.line);
      c.diagnostics.push_back(std::move(d));
    }
    c.inline_calls.push_back(std::move(ic));
  }

  c.triton_kernels = TritonKernels(m);  // lines of `code`, as execute and the rules read it
  const bool triton = c.inline_calls.empty() && !c.triton_kernels.empty();
  c.family = family.value_or(triton ? backend::Family::kTriton : backend::Family::kLoadInline);

  if (!c.has_model_new) {
    Diagnostic d = Error("no_model_new", "the candidate does not define a top-level class ModelNew",
                         "Define `class ModelNew(nn.Module)` at module level (not nested in a "
                         "function, class or if), taking the same __init__ arguments as Model and "
                         "computing the same forward.");
    // A ModelNew nested somewhere is the likely mistake; point at it. Otherwise no line is at
    // fault.
    for (const Statement& s : m.statements) {
      if (s.end - s.begin >= 2 && m.tokens[s.begin].text == "class" &&
          m.tokens[s.begin + 1].text == "ModelNew") {
        d.message = "class ModelNew is defined, but not at module level";
        d.line = s.line + offset;
        d.col = m.tokens[s.begin].col;
        d.excerpt = LineText(submitted, d.line);
        break;
      }
    }
    c.diagnostics.push_back(std::move(d));
  }
  if (c.family == backend::Family::kTriton && c.triton_kernels.empty()) {
    c.diagnostics.push_back(Error(
        "no_kernel", "the candidate must define its kernels with @triton.jit, but it defines none",
        "Write each kernel as a module-level function decorated with @triton.jit, using "
        "triton.language (tl.load, tl.store, tl.program_id, ...), and launch it from "
        "ModelNew.forward with kernel[grid](...); a pure-PyTorch rewrite is not accepted."));
  } else if (c.family == backend::Family::kLoadInline && c.inline_calls.empty()) {
    c.diagnostics.push_back(Error(
        "no_kernel",
        "the candidate must build its kernels with torch.utils.cpp_extension.load_inline, but "
        "it never calls load_inline",
        "Compile your kernels with torch.utils.cpp_extension.load_inline(name=..., "
        "cpp_sources=..., cuda_sources=..., functions=[...]) at module level and call them from "
        "ModelNew.forward; a pure-PyTorch rewrite is not accepted."));
  }
  return c;
}

}  // namespace kf::extract
