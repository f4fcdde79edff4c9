// Triton candidates: which functions are @triton.jit kernels (however triton is imported), and
// where a Triton compile error points in the candidate. Pure; internal to kforge (extract,
// the static rules and execute include it).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "extract/python_parse.h"

namespace kf::extract {

// One function decorated with triton.jit (lines are lines of the parsed code).
struct TritonKernel {
  std::string name;
  int first_line = 0;      // its first decorator
  int def_line = 0;        // `def name(`: line 1 of the source Triton compiles
  int end_line = 0;        // the last line of its body
  int def_indent = 0;      // columns before `def` (Triton dedents the source it compiles)
  int stmt = -1;           // the def statement in ParsedModule::statements
  bool autotuned = false;  // a triton.autotune decorator above it
};

// The canonical dotted path a decorator statement (`@triton.jit`, `@jit(...)`, `@tr.autotune(`)
// names through the module's imports ("triton.jit"); "" when it names nothing imported.
std::string DecoratorPath(const ParsedModule& m, int stmt);

// Every function (at any level) with a triton.jit decorator (`triton.jit`,
// `triton.runtime.jit`, `triton.runtime.jit.jit`, with or without arguments), in source order.
std::vector<TritonKernel> TritonKernels(const ParsedModule& m);

// A Triton compile error mapped to a line of `code`. Triton reports `at L:C:` with L relative to
// the compiled function's `def` line and C to its dedented text, followed by the source up to
// that line and a caret; the function may be the launched `kernel` or a @triton.jit helper it
// calls. The line whose text is the excerpt's last source line wins; without an excerpt,
// `kernel`'s def line + L - 1. A message with no `at L:C:` that names what Triton refused
// ("Unsupported function referenced: <built-in method relu of ...>", raised before compiling)
// points at the first line of `kernel`'s body, then its helpers', that calls that name
// (`relu(` or `.relu(`), else that mentions it, *col at the name. Returns 0 when nothing fits;
// *col (1-based) when given.
int TritonErrorLine(std::string_view code, const std::vector<TritonKernel>& kernels,
                    std::string_view kernel, std::string_view message, int* col = nullptr);

}  // namespace kf::extract
