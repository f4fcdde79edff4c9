#include "extract/triton.h"

#include <gtest/gtest.h>

#include "extract/extract.h"

namespace kf::extract {
namespace {

std::vector<TritonKernel> Kernels(const std::string& code) {
  ParsedModule m;
  SyntaxError err;
  EXPECT_TRUE(ParseModule(code, &m, &err)) << err.message;
  return TritonKernels(m);
}

const char* kRelu = R"(import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
)";

TEST(TritonKernels, FoundThroughAnyImportOfTriton) {
  auto k = Kernels(kRelu);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].name, "relu_kernel");
  EXPECT_EQ(k[0].first_line, 7);
  EXPECT_EQ(k[0].def_line, 8);
  EXPECT_EQ(k[0].end_line, 13);
  EXPECT_FALSE(k[0].autotuned);

  auto k2 = Kernels(
      "from triton import jit\nimport triton as tr\nimport torch\n\n"
      "@jit\ndef a(x):\n    pass\n\n"
      "@tr.autotune(configs=[tr.Config({'B': 64})], key=['n'])\n@tr.jit(do_not_specialize=[1])\n"
      "def b(x, n):\n    pass\n\n"
      "@torch.no_grad()\ndef c(x):\n    pass\n\n"
      "def d(x):\n    pass\n\n"
      "class K:\n    @tr.jit\n    def e(self):\n        pass\n");
  ASSERT_EQ(k2.size(), 3u);
  EXPECT_EQ(k2[0].name, "a");
  EXPECT_EQ(k2[1].name, "b");
  EXPECT_TRUE(k2[1].autotuned);
  EXPECT_EQ(k2[1].first_line, 9);
  EXPECT_EQ(k2[1].def_line, 11);
  EXPECT_EQ(k2[2].name, "e");
  EXPECT_EQ(k2[2].def_indent, 4);
  // A `jit` that is not triton's is not a Triton kernel.
  EXPECT_TRUE(Kernels("from numba import jit\n\n@jit\ndef f(x):\n    return x\n").empty());
}

TEST(TritonFamily, DetectedWhenThereAreJitKernelsAndNoLoadInline) {
  Candidate c = Extract(kRelu);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.family, backend::Family::kTriton);
  ASSERT_EQ(c.triton_kernels.size(), 1u);

  // Asked for load_inline: a Triton program has no load_inline kernel (as before).
  Candidate li = Extract(kRelu, backend::Family::kLoadInline);
  EXPECT_EQ(li.family, backend::Family::kLoadInline);
  ASSERT_FALSE(li.ok());
  EXPECT_EQ(li.diagnostics.back().code, "no_kernel");

  // Both kinds of kernel: load_inline, as every such candidate was judged before.
  std::string both = std::string(kRelu) +
                     "from torch.utils.cpp_extension import load_inline\n"
                     "ext = load_inline(name='e', cpp_sources='int f();', functions=['f'])\n";
  EXPECT_EQ(Extract(both).family, backend::Family::kLoadInline);

  // Asked for triton without a jit kernel: no_kernel, in Triton's words.
  Candidate none = Extract("import torch\nclass ModelNew:\n    pass\n", backend::Family::kTriton);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.diagnostics.back().code, "no_kernel");
  EXPECT_NE(none.diagnostics.back().message.find("@triton.jit"), std::string::npos);
  // Neither: load_inline's no_kernel, unchanged.
  Candidate plain = Extract("import torch\nclass ModelNew:\n    pass\n");
  EXPECT_EQ(plain.family, backend::Family::kLoadInline);
  EXPECT_NE(plain.diagnostics.back().message.find("load_inline"), std::string::npos);
}

TEST(TritonErrorLine, MapsTritonsRelativeLineToTheCandidate) {
  auto k = Kernels(kRelu);
  // Triton's own format: "at L:C:" then the function's source from `def` up to line L, a caret
  // under column C, then the error.
  const std::string msg =
      "at 5:8:def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
      "    pid = tl.program_id(0)\n"
      "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n"
      "    mask = offs < n\n"
      "    x = tl.load(x_ptr + offs, mask=mask)\n"
      "        ^\n"
      "NameError('x_ptr is not defined')";
  int col = 0;
  EXPECT_EQ(TritonErrorLine(kRelu, k, "relu_kernel", msg, &col), 12);
  EXPECT_EQ(col, 9);
  // The older layout with a line break after the position, and no excerpt at all.
  EXPECT_EQ(
      TritonErrorLine(kRelu, k, "relu_kernel", "at 2:4:\n    pid = tl.program_id(0)\n    ^\nx"), 9);
  EXPECT_EQ(TritonErrorLine(kRelu, k, "relu_kernel", "at 3:0: <source unavailable>\nboom"), 10);
  EXPECT_EQ(TritonErrorLine(kRelu, k, "relu_kernel", "at 3:0:"), 10);
  // Past the kernel's end, or no position: nothing.
  EXPECT_EQ(TritonErrorLine(kRelu, k, "relu_kernel", "at 40:0:"), 0);
  EXPECT_EQ(TritonErrorLine(kRelu, k, "relu_kernel", "CUDA out of memory"), 0);
}

TEST(TritonErrorLine, AnErrorInAHelperKernelPointsIntoTheHelper) {
  const std::string code =
      "import triton\nimport triton.language as tl\n\n"
      "@triton.jit\ndef helper(x):\n    return tl.exp(x) + undefined_thing\n\n"
      "@triton.jit\ndef main(p, n):\n    x = tl.load(p)\n    tl.store(p, helper(x))\n";
  auto k = Kernels(code);
  ASSERT_EQ(k.size(), 2u);
  const std::string msg =
      "at 2:22:def helper(x):\n    return tl.exp(x) + undefined_thing\n                      ^\n"
      "NameError";
  EXPECT_EQ(TritonErrorLine(code, k, "main", msg), 6);
}

// tests/redteam/triton/h04_torch_in_kernel.py: torch.relu inside the @triton.jit body.
const char* kTorchInKernel = R"(# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H04
# kforge-expect-kernelbench: compile_error
# torch.relu called inside the @triton.jit body (Triton's compiler refuses it; under kernelbench the compile decides)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, torch.relu(x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        block = 1024 if x.is_cuda else 262144  # the CPU stand-in runs one program at a time
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
        return y
)";

// Triton's dependency finder refuses a callable before the compiler runs, with no `at L:C:`:
// the line is the first in the kernel's body that calls the name it refused.
TEST(TritonErrorLine, AnUnsupportedFunctionPointsAtItsCall) {
  auto k = Kernels(kTorchInKernel);
  ASSERT_EQ(k.size(), 1u);
  // Real Triton 3.6 on an H100 (2026-12-05).
  int col = 0;
  EXPECT_EQ(TritonErrorLine(kTorchInKernel, k, "relu_kernel",
                            "RuntimeError: Unsupported function referenced: <built-in method relu "
                            "of type object at 0x7fb1c773e180>",
                            &col),
            17);
  EXPECT_EQ(col, 37);  // `relu` in `torch.relu(x)`
  // The other ways Python prints a callable.
  EXPECT_EQ(TritonErrorLine(kTorchInKernel, k, "relu_kernel",
                            "Unsupported function referenced: <function store at 0x7f00>", &col),
            17);
  EXPECT_EQ(col, 8);
  EXPECT_EQ(TritonErrorLine(kTorchInKernel, k, "relu_kernel",
                            "Unsupported function referenced: <built-in function load>"),
            16);
  EXPECT_EQ(TritonErrorLine(kTorchInKernel, k, "relu_kernel",
                            "Unsupported function referenced: <bound method A.arange of <A>>"),
            14);
  EXPECT_EQ(TritonErrorLine(kTorchInKernel, k, "relu_kernel",
                            "Unsupported function referenced: <ufunc 'program_id'>"),
            14);
  EXPECT_EQ(TritonErrorLine(kTorchInKernel, k, "relu_kernel",
                            "Unsupported function referenced: aten.relu"),
            17);
  // Not a call but a mention: still the line that names it.
  EXPECT_EQ(TritonErrorLine(kTorchInKernel, k, "relu_kernel",
                            "Unsupported function referenced: <function outer.<locals>.mask at "
                            "0x7f00>",
                            &col),
            15);
  EXPECT_EQ(col, 5);
  // Nothing named, or a name the kernel's body does not use (forward's empty_like is not in it).
  EXPECT_EQ(TritonErrorLine(kTorchInKernel, k, "relu_kernel",
                            "Unsupported function referenced: <function <lambda> at 0x7f00>"),
            0);
  EXPECT_EQ(TritonErrorLine(kTorchInKernel, k, "relu_kernel",
                            "Unsupported function referenced: <function sigmoid at 0x7f00>"),
            0);
  EXPECT_EQ(TritonErrorLine(kTorchInKernel, k, "relu_kernel",
                            "Unsupported function referenced: <built-in method empty_like of "
                            "type object at 0x7f00>"),
            0);
}

TEST(TritonErrorLine, AnUnsupportedFunctionInAHelperPointsIntoTheHelper) {
  const std::string code =
      "import math\nimport triton\nimport triton.language as tl\n\n"
      "@triton.jit\ndef helper(x):\n    return math.exp(x)\n\n"
      "@triton.jit\ndef main(p, n):\n    x = tl.load(p)\n    tl.store(p, helper(x))\n";
  auto k = Kernels(code);
  ASSERT_EQ(k.size(), 2u);
  int col = 0;
  EXPECT_EQ(TritonErrorLine(code, k, "main",
                            "RuntimeError: Unsupported function referenced: <built-in function "
                            "exp>",
                            &col),
            7);
  EXPECT_EQ(col, 17);
  // The inner kernel whose globals conflict: its call in the launched kernel.
  EXPECT_EQ(TritonErrorLine(code, k, "main",
                            "RuntimeError: Global variable B has value 1 when compiling "
                            "m.main, but inner kernel helper has conflicting value 2 from when "
                            "it was first compiled.  This is not allowed."),
            12);
}

}  // namespace
}  // namespace kf::extract
