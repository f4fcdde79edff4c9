// The static rules on Triton candidates: forward may launch its @triton.jit kernels and
// compute the grid; the kernel bodies may use triton.language and arithmetic only.
#include <gtest/gtest.h>

#include "legality/testing.h"

namespace kf::legality {
namespace {

using testing::Summary;

// Ten lines of imports and a kernel `k` (lines 5-10); the rest of a snippet starts at line 11.
constexpr char kTritonPrelude[] =
    "import torch\n"                                                           // 1
    "import torch.nn as nn\n"                                                  // 2
    "import triton\n"                                                          // 3
    "import triton.language as tl\n"                                           // 4
    "@triton.jit\n"                                                            // 5
    "def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"                           // 6
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"              // 7
    "    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n"                // 8
    "    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * 2 + 1, mask=offs < n)\n"  // 9
    "\n";                                                                      // 10

std::string TritonFindings(const std::string& rest, LegalityOptions opt = {}) {
  extract::Candidate c = extract::Extract(std::string(kTritonPrelude) + rest);
  EXPECT_EQ(c.family, backend::Family::kTriton);
  return Summary(Check(c, opt));
}

// A ModelNew whose forward(self, x) body is `forward` (8 spaces), after kTritonPrelude: the
// body starts at line 15.
std::string Forward(const std::string& forward) {
  return "class ModelNew(nn.Module):\n"   // 11
         "    def __init__(self):\n"      // 12
         "        super().__init__()\n"   // 13
         "    def forward(self, x):\n" +  // 14
         forward;
}

TEST(TritonRules, AnHonestCandidatePasses) {
  EXPECT_EQ(TritonFindings(Forward("        x = x.contiguous()\n"
                             "        y = torch.empty_like(x)\n"
                             "        n = x.numel()\n"
                             "        grid = lambda meta: (triton.cdiv(n, meta['BLOCK']),)\n"
                             "        k[grid](x, y, n, BLOCK=1024)\n"
                             "        k[(triton.cdiv(n, 256),)](x, y, n, 256)\n"
                             "        return y\n")),
            "");
}

TEST(TritonRules, TorchComputeInForwardIsStillH01) {
  EXPECT_EQ(TritonFindings(Forward("        y = torch.empty_like(x)\n"
                             "        k[(1,)](x[:1], y, 1, BLOCK=16)\n"
                             "        return torch.relu(x)\n")),
            "H01:17");
  // Triton calls other than the grid helpers compute beside the kernels.
  EXPECT_EQ(TritonFindings(Forward("        return triton.testing.do_bench(lambda: x)\n")), "H01:15");
}

TEST(TritonRules, LibrariesInsideAKernelAreH04) {
  EXPECT_EQ(TritonFindings("import math\n"  // 11
                     "@triton.jit\n"
                     "def g(p, n):\n"
                     "    v = tl.load(p)\n"
                     "    w = torch.relu(v)\n"               // 15
                     "    tl.store(p, math.exp(1.0) * w)\n"  // 16
                     "    q = tl.extra.cuda.libdevice.exp(v)\n"),
            "H04:15 H04:16");
  // Under the kernelbench policy the caller (eval::StaticFindings) turns H04 into a note.
}

TEST(TritonRules, ReducedPrecisionOnAnFp32Problem) {
  const std::string body =
      "@triton.jit\n"                                       // 11
      "def mm(a, b, c):\n"                                  // 12
      "    x = tl.load(a).to(tl.float16)\n"                 // 13 H13
      "    if x.dtype == tl.bfloat16:\n"                    // 14 a comparison: nothing
      "        x = x\n"                                     // 15
      "    d = tl.dot(x, tl.load(b))\n"                     // 16 note: TF32 by default
      "    e = tl.dot(x, x, input_precision='ieee')\n"      // 17 fine
      "    f = tl.dot(x, x, allow_tf32=False)\n"            // 18 fine
      "    g = tl.dot(x, x, input_precision=\"tf32x3\")\n"  // 19 H13
      "    h = tl.dot(x, x, allow_tf32=True)\n";            // 20 H13
  EXPECT_EQ(TritonFindings(body), "H13:13 H13_note:16 H13:19 H13:20");
  LegalityOptions half;
  half.fp32_problem = false;
  EXPECT_EQ(TritonFindings(body, half), "");
}

TEST(TritonRules, KernelsAreNotPythonThatForwardRuns) {
  // In a load_inline candidate a Triton kernel forward reaches is foreign compute (H01), as
  // before; in a Triton candidate it is the candidate's own kernel.
  const std::string text =
      std::string(kTritonPrelude) +
      "from torch.utils.cpp_extension import load_inline\n"
      "ext = load_inline(name='e', cpp_sources='int f();', functions=['f'])\n" +
      Forward(
          "        y = torch.empty_like(x)\n"
          "        k[(1,)](x, y, x.numel(), BLOCK=16)\n"
          "        return ext.f(y)\n");
  extract::Candidate li = extract::Extract(text);
  EXPECT_EQ(li.family, backend::Family::kLoadInline);
  const std::string found = Summary(Check(li));
  EXPECT_NE(found.find("H01:7"), std::string::npos) << found;
  extract::Candidate tr = extract::Extract(text, backend::Family::kTriton);
  EXPECT_EQ(Summary(Check(tr)), "");
}

TEST(TritonRules, HintsInTritonsWords) {
  extract::Candidate c =
      extract::Extract(std::string(kTritonPrelude) + Forward("        return torch.relu(x)\n"));
  auto ds = Check(c);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_NE(ds[0].hint.find("@triton.jit"), std::string::npos) << ds[0].hint;
}

}  // namespace
}  // namespace kf::legality
