#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kf::legality
