// The crash hint that names a streamed TORCH_CHECK: on the GPU machine such a check that fails
// ends the process with SIGSEGV instead of raising (an H100, 2026-12-07: its compiler links a
// static libstdc++ into each extension, and formatting a number there crashes).
#include <gtest/gtest.h>

#include "eval/impl.h"

namespace kf::eval {
namespace {

const char* const kMemoryHint = "Check memory accesses: indices, sizes and pointers passed to kernels.";

// A candidate whose CUDA source holds `checks` (C++ lines) in its host function.
extract::Candidate WithChecks(const std::string& checks) {
  const std::string text =
      "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
      "cuda_src = r'''\n#include <torch/extension.h>\n"
      "torch::Tensor f(torch::Tensor x, int64_t op) {\n" +
      checks +
      "  return x;\n}\n'''\n"
      "cpp_src = 'torch::Tensor f(torch::Tensor x, int64_t op);'\n"
      "ext = load_inline(name='e', cpp_sources=cpp_src, cuda_sources=cuda_src, functions=['f'])\n"
      "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.f(x, 1)\n";
  return extract::Extract(text);
}

Diagnostic Segfault() {
  Diagnostic d;
  d.stage = "correctness";
  d.code = "crash";
  d.message = "the candidate process died during correctness trial 1: it was killed by signal 11 "
              "(Segmentation fault)";
  d.hint = kMemoryHint;
  return d;
}

TEST(CrashHint, ASegfaultNamesACheckThatStreamsItsMessageAndItsLine) {
  extract::Candidate c = WithChecks(
      "  TORCH_CHECK(x.is_cuda(), \"x must be CUDA\");\n"
      "  TORCH_CHECK(op >= 0 && op < 4,\n              \"unknown op \", op);\n");
  ASSERT_EQ(c.inline_calls.size(), 1u);
  ASSERT_TRUE(c.inline_calls[0].resolved) << c.inline_calls[0].unresolved_why;
  Diagnostic d = Segfault();
  HintStreamedCheck(c, &d);
  EXPECT_EQ(d.hint.rfind(kMemoryHint, 0), 0u) << d.hint;  // either may be the cause
  // As one line, with the line of the submitted text where it starts.
  EXPECT_NE(d.hint.find("`TORCH_CHECK(op >= 0 && op < 4, \"unknown op \", op)` (line 8)"),
            std::string::npos)
      << d.hint;
}

TEST(CrashHint, NestedCallsAndCommasInLiteralsAreOnePart) {
  EXPECT_FALSE(FindStreamedCheck(WithChecks(
      "  TORCH_CHECK(f(x, 1).defined() && v[g(0, 1)], \"a, b, c\");\n")));
  EXPECT_FALSE(FindStreamedCheck(WithChecks("  TORCH_CHECK(x.dim() == 2);\n")));
  // A macro that wraps the check with one literal (#x pastes into it): nothing to name.
  EXPECT_FALSE(FindStreamedCheck(WithChecks(
      "#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x \" must be a CUDA tensor\")\n"
      "  CHECK_CUDA(x);\n")));
  auto streamed = FindStreamedCheck(WithChecks("  TORCH_CHECK(f(x, 1), \"n = \", x.size(0));\n"));
  ASSERT_TRUE(streamed);
  EXPECT_EQ(streamed->text, "TORCH_CHECK(f(x, 1), \"n = \", x.size(0))");
}

TEST(CrashHint, ACheckInTheCppSourcesIsNamedToo) {
  // g++-built code crashed the same way on the GPU machine (2026-12-07): its compiler's static
  // libstdc++, not nvcc.
  const std::string text =
      "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
      "cpp_src = r'''\n#include <torch/extension.h>\n"
      "torch::Tensor f(torch::Tensor x) {\n  TORCH_CHECK(x.dim() == 2, \"dims: \", x.dim());\n"
      "  return x;\n}\n'''\n"
      "ext = load_inline(name='e', cpp_sources=cpp_src, functions=['f'])\n"
      "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.f(x)\n";
  auto found = FindStreamedCheck(extract::Extract(text));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->text, "TORCH_CHECK(x.dim() == 2, \"dims: \", x.dim())");
  EXPECT_EQ(found->line, 7);
}

TEST(CrashHint, OnlyASegfaultGetsIt) {
  extract::Candidate streamed = WithChecks("  TORCH_CHECK(op < 4, \"op \", op);\n");
  Diagnostic aborted = Segfault();
  aborted.message = "the candidate process died during correctness trial 1: it was killed by "
                    "signal 6 (Aborted)";
  HintStreamedCheck(streamed, &aborted);
  EXPECT_EQ(aborted.hint, kMemoryHint);
  Diagnostic raised = Segfault();
  raised.code = "runtime_error";
  HintStreamedCheck(streamed, &raised);
  EXPECT_EQ(raised.hint, kMemoryHint);
  // Literal messages only: the memory hint alone.
  Diagnostic literal = Segfault();
  HintStreamedCheck(WithChecks("  TORCH_CHECK(op < 4, \"op must be below 4\");\n"), &literal);
  EXPECT_EQ(literal.hint, kMemoryHint);
}

}  // namespace
}  // namespace kf::eval
