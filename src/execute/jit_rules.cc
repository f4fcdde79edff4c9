#include "execute/jit_rules.h"

#include <algorithm>

#include "extract/triton.h"

namespace kf::execute {
using nlohmann::json;

void AddJitReport(const json& reply, JitStats* s) {
  const json jit = reply.value("jit", json::object());
  if (!jit.is_object()) return;
  s->compiles = std::max(s->compiles, jit.value("compiles", 0));
  s->compile_ms = std::max(s->compile_ms, jit.value("compile_ms", 0.0));
  s->launches = std::max(s->launches, jit.value("launches", 0));
}

std::optional<std::string> MissingLaunchHooks(const json& load_reply) {
  const json jit = load_reply.value("jit", json());
  if (!jit.is_object()) {
    return "the candidate host did not report its Triton hooks (an older kforge runner?)";
  }
  const json hooks = jit.value("hooks", json::array());
  if (hooks.is_array() && std::find(hooks.begin(), hooks.end(), "launch") != hooks.end()) {
    return std::nullopt;
  }
  return "kforge cannot watch the kernel launches of this Triton (" +
         jit.value("version", std::string("unknown version")) +
         "): its JITFunction.run is not where kforge looks, so neither the launch count nor the "
         "ghost replay could be trusted";
}

Diagnostic JitCompileDiagnostic(const json& reply, const std::string& code) {
  Diagnostic d;
  d.stage = "build";
  d.code = "compile_error";
  const std::string message = reply.value("message", std::string("Triton failed to compile"));
  const std::string kernel = reply.value("kernel", std::string());
  extract::ParsedModule m;
  extract::SyntaxError err;
  if (extract::ParseModule(code, &m, &err)) {
    int col = 0;
    d.line = extract::TritonErrorLine(code, extract::TritonKernels(m), kernel, message, &col);
    if (d.line > 0) d.col = col;
  }
  d.message = (kernel.empty() ? "Triton could not compile a kernel: "
                              : "Triton could not compile the kernel " + kernel + ": ") +
              (message.size() > 3000 ? message.substr(0, 3000) + "..." : message);
  d.hint =
      "Fix the kernel at this line: Triton's compiler says what it could not compile. A "
      "@triton.jit body may use only triton.language, your other @triton.jit functions and "
      "plain arithmetic.";
  return d;
}

}  // namespace kf::execute
