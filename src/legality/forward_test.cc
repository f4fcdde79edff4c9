#include <gtest/gtest.h>

#include <algorithm>

#include "legality/testing.h"

namespace kf::legality {
namespace {

using testing::CheckBody;
using testing::Findings;
using testing::WithForward;

TEST(ForwardTest, HonestForwardPasses) {
  EXPECT_EQ(
      Findings(WithForward("        x = x.contiguous().view(-1, x.size(-1))\n"
                           "        n = x.size(0) * 2 + x.shape[1] // 4 - 1\n"
                           "        out = torch.empty_like(x)\n"
                           "        z = torch.zeros(n, device=x.device, dtype=x.dtype)\n"
                           "        if x.dim() != 2 or n < 0:\n"
                           "            n = -n\n"
                           "        grid = (x.numel() + 255) // 256\n"
                           "        return ext.f(x.reshape(n, -1).t().float(), out, grid, z)\n")),
      "");
}

TEST(ForwardTest, TorchComputeThroughAnyAlias) {
  EXPECT_EQ(Findings(WithForward("        return torch.matmul(x, y)\n")), "H01:13");
  EXPECT_EQ(Findings("import torch as t\nimport torch.nn.functional as F\n" +
                     WithForward("        a = F.relu(x)\n"
                                 "        return t.softmax(a, 1)\n")),
            "H01:15 H01:16");
  EXPECT_EQ(Findings("from torch import nn as N\nfrom torch import matmul as mm\n" +
                     WithForward("        y = N.functional.gelu(x)\n"
                                 "        return mm(x, y)\n")),
            "H01:15 H01:16");
  EXPECT_EQ(Findings("op = torch.nn.functional.silu\n" + WithForward("        return op(x)\n")),
            "H01:14");
  EXPECT_EQ(Findings(WithForward("        return torch.ops.aten.mm(x, y)\n")), "H01:13");
  EXPECT_EQ(Findings(WithForward("        return torch.Tensor.add(x, y)\n")), "H01:13");
}

TEST(ForwardTest, MessageNamesTheCallAndTheRule) {
  const auto ds = CheckBody(WithForward("        return torch.matmul(x, y)\n"));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].stage, "static");
  EXPECT_EQ(ds[0].severity, Severity::kError);
  EXPECT_EQ(ds[0].col, 16);
  EXPECT_EQ(ds[0].excerpt, "        return torch.matmul(x, y)");
  EXPECT_EQ(ds[0].message,
            "ModelNew.forward calls torch.matmul: computing with PyTorch instead of your kernel "
            "is not allowed (H01)");
  EXPECT_NE(ds[0].hint.find("torch.empty"), std::string::npos);
}

TEST(ForwardTest, TensorMethodsAndOperators) {
  EXPECT_EQ(Findings(WithForward("        return x.relu()\n")), "H01:13");
  EXPECT_EQ(Findings(WithForward("        return x.contiguous().sum(dim=1)\n")), "H01:13");
  EXPECT_EQ(Findings(WithForward("        return x @ y\n")), "H01:13");
  EXPECT_EQ(Findings(WithForward("        return x.matmul(y)\n")), "H01:13");
  EXPECT_EQ(Findings(WithForward("        out = ext.f(x)\n"
                                 "        return out * 2 + 1\n")),
            "H01:14");
  EXPECT_EQ(Findings(WithForward("        z = x.view(-1)\n"
                                 "        z += y\n"
                                 "        return -z\n")),
            "H01:14 H01:15");
  EXPECT_EQ(Findings(WithForward("        return x * (x > 0)\n")), "H01:13");
  EXPECT_EQ(Findings(WithForward("        return x.add_(y).clamp_(min=0).__mul__(2)\n")), "H01:13");
}

TEST(ForwardTest, SubmodulesAndStoredFunctions) {
  const std::string init =
      "class ModelNew(nn.Module):\n"                        // 9
      "    def __init__(self):\n"                           // 10
      "        super().__init__()\n"                        // 11
      "        self.linear = nn.Linear(4, 4)\n"             // 12
      "        self.layers = nn.ModuleList([nn.ReLU()])\n"  // 13
      "        self.act = torch.relu\n"                     // 14
      "        self.w = nn.Parameter(torch.randn(4))\n"     // 15
      "    def forward(self, x):\n";                        // 16
  EXPECT_EQ(Findings(init + "        return self.linear(x)\n"), "H01:17");
  EXPECT_EQ(Findings(init + "        return self.layers[0](x)\n"), "H01:17");
  EXPECT_EQ(Findings(init + "        return self.act(x)\n"), "H01:17");
  EXPECT_EQ(Findings(init + "        return self.linear.forward(x)\n"), "H01:17");
  EXPECT_EQ(Findings(init + "        for layer in self.layers:\n"
                            "            x = layer(x)\n"
                            "        return x\n"),
            "H01:18");
  EXPECT_EQ(Findings(init + "        return ext.f(x) + self.w\n"), "H01:17");
  // Honest: weights go to the kernel; parameters() is bookkeeping.
  EXPECT_EQ(
      Findings(init + "        n = len(list(self.linear.parameters()))\n"
                      "        return ext.f(x, self.linear.weight, self.linear.bias, self.w, n)\n"),
      "");
}

TEST(ForwardTest, HelpersReachedFromForwardAreChecked) {
  const std::string code =
      "def helper(a, b):\n"                    // 9
      "    return torch.bmm(a, b)\n"           // 10
      "def scale(t):\n"                        // 11
      "    return t * 3\n"                     // 12
      "def unused(a):\n"                       // 13
      "    return torch.relu(a)\n"             // 14
      "class ModelNew(nn.Module):\n"           // 15
      "    def _impl(self, x):\n"              // 16
      "        return x.softmax(-1)\n"         // 17
      "    def forward(self, x, y):\n"         // 18
      "        x = self._impl(x)\n"            // 19
      "        return scale(helper(x, y))\n";  // 20
  EXPECT_EQ(Findings(code), "H01:10 H01:12 H01:17");
}

TEST(ForwardTest, InheritedAndSuperForward) {
  EXPECT_EQ(Findings("class ModelNew(nn.Linear):\n    pass\n"), "H01:9");
  EXPECT_EQ(Findings("class Model(nn.Module):\n"
                     "    def forward(self, x):\n"
                     "        return torch.tanh(x)\n"
                     "class ModelNew(Model):\n"
                     "    def forward(self, x):\n"
                     "        return super().forward(x)\n"),
            "H01:11");
}

TEST(ForwardTest, ModelNewBoundToAnotherClass) {
  // `ModelNew = Model`: Model's forward is ModelNew's, judged and named as such.
  const auto ds = testing::CheckBody(
      "class Model(nn.Module):\n"
      "    def forward(self, x):\n"
      "        return ext.f(torch.matmul(x, x))\n"
      "ModelNew = Model\n");
  EXPECT_EQ(testing::Summary(ds), "H01:11");
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].message.rfind("ModelNew.forward calls torch.matmul", 0), 0u) << ds[0].message;
}

TEST(ForwardTest, StarImportsBuiltinsAndNumpy) {
  EXPECT_EQ(
      Findings("from torch.nn.functional import *\n" + WithForward("        return relu(x)\n")),
      "H01:14");
  EXPECT_EQ(Findings(WithForward("        return sum(x)\n")), "H01:13");
  EXPECT_EQ(Findings("import numpy as np\n" +
                     WithForward("        k = np.prod(x.shape)\n"
                                 "        return torch.from_numpy(np.tanh(x.cpu().numpy()))\n")),
            "H01:15");
}

// A guarded build (issue 28): `kext` is None when load_inline failed; ModelNew's forward body
// starts at line 18, `extra` (methods) after it.
std::string Guarded(const std::string& forward, const std::string& extra = "",
                    const std::string& module_extra = "") {
  return "try:\n"                                                                // 9
         "    kext = load_inline(name='k', cpp_sources=src, functions=['f'])\n"  // 10
         "except Exception:\n"                                                   // 11
         "    kext = None\n" +                                                   // 12
         module_extra +
         "class ModelNew(nn.Module):\n"           // 13
         "    def __init__(self):\n"              // 14
         "        super().__init__()\n"           // 15
         "        self.use = kext is not None\n"  // 16
         "    def forward(self, x):\n" +          // 17
         forward +
         extra;
}

// Errors only ("H01:19"), the notes left out.
std::string Errors(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const Diagnostic& d : ds) {
    if (d.severity == Severity::kError)
      s += (s.empty() ? "" : " ") + d.code + ":" + std::to_string(d.line);
  }
  return s;
}

// A fallback that only a failed build chooses is judged by what runs: a note, not H01.
TEST(ForwardTest, AFallbackOnlyTheBuildChoosesIsJudgedByWhatRuns) {
  auto ds =
      CheckBody(Guarded("        if kext is None:\n"          // 18
                        "            return torch.relu(x)\n"  // 19
                        "        return kext.f(x)\n"));       // 20
  EXPECT_EQ(Errors(ds), "");
  auto note =
      std::find_if(ds.begin(), ds.end(), [](const Diagnostic& d) { return d.code == "H01"; });
  ASSERT_NE(note, ds.end());
  EXPECT_EQ(note->severity, Severity::kInfo);
  EXPECT_EQ(note->line, 19);
  EXPECT_NE(note->message.find("only the extension's build chooses (the if at line 18)"),
            std::string::npos)
      << note->message;
  // An attribute set from the guard, an else branch, a method only that branch calls.
  EXPECT_EQ(Errors(CheckBody(Guarded("        if self.use and x.is_cuda:\n"
                                     "            return kext.f(x)\n"
                                     "        else:\n"
                                     "            return self._fallback(x)\n",
                                     "    def _fallback(self, x):\n"
                                     "        return torch.relu(x)\n"))),
            "");
  // The code after the if runs whatever the build did: still H01.
  EXPECT_EQ(Errors(CheckBody(Guarded("        if self.use:\n"
                                     "            y = kext.f(x)\n"
                                     "        return torch.relu(x)\n"))),
            "H01:20");
}

// What a cheat could flip or mix in keeps the static rule.
TEST(ForwardTest, AGuardTheCallsCanChangeIsNoGuard) {
  // Assigned by forward (after the first call, the fallback would run).
  EXPECT_EQ(Errors(CheckBody(Guarded("        if self.use:\n"
                                     "            self.use = False\n"
                                     "            return kext.f(x)\n"
                                     "        return torch.relu(x)\n"))),
            "H01:21");
  EXPECT_EQ(Errors(CheckBody(Guarded("        if not self.use:\n"
                                     "            return torch.relu(x)\n"
                                     "        self.use, n = False, 1\n"
                                     "        return kext.f(x)\n"))),
            "H01:19");
  // A condition that is not the build's alone: a call counter.
  EXPECT_EQ(Errors(CheckBody(Guarded("        self.n = self.n + 1\n"
                                     "        if self.use and self.n < 2:\n"
                                     "            return kext.f(x)\n"
                                     "        return torch.relu(x)\n"))),
            "H01:21");
  // setattr anywhere (a forward hook could flip the guard): nothing is deferred.
  EXPECT_EQ(Errors(CheckBody(Guarded("        if kext is None:\n"
                                     "            return torch.relu(x)\n"
                                     "        return kext.f(x)\n",
                                     "    def flip(self):\n"
                                     "        setattr(self, 'use', False)\n"))),
            "H01:19");
  // A method called from the fallback and from the kernel path is not a fallback.
  EXPECT_EQ(Errors(CheckBody(Guarded("        if not self.use:\n"
                                     "            return self._post(x)\n"
                                     "        return self._post(kext.f(x))\n",
                                     "    def _post(self, x):\n"
                                     "        return torch.relu(x)\n"))),
            "H01:22");
  // A name assigned outside a build's try is no guard.
  EXPECT_EQ(Errors(CheckBody(Guarded("        if FAST:\n"
                                     "            return torch.relu(x)\n"
                                     "        return kext.f(x)\n",
                                     "", "FAST = True\n"))),
            "H01:20");
}

}  // namespace
}  // namespace kf::legality
