// Op signatures from problem sources, and the nearest benchmark problem.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "synth/internal.h"
#include "synth/synth.h"

namespace kf::synth {
namespace {

using Sig = std::vector<std::string>;

std::string Read(const std::string& rel) {
  std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(OpSignature, LayersCallsAndOperatorsInExecutionOrder) {
  const char* src = R"(import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.scale = 0.5

    def forward(self, x):
        b, s, d = x.shape
        q = self.qkv(self.ln(x)).view(b, s, 3, d // 2 * 2)
        y = torch.softmax(q @ q.transpose(-2, -1) * self.scale, dim=-1)
        x = x + self.mlp(y)
        return x.pow(2).mean(dim=-1)
)";
  // ln runs before qkv though it is written after it; `3, d // 2 * 2` inside view is sizes.
  EXPECT_EQ(OpSignature(src), (Sig{"layer_norm", "linear", "matmul", "mul", "softmax", "linear",
                                   "gelu", "linear", "add", "pow", "mean"}));
}

TEST(OpSignature, SpellingsOfOneOpAgree) {
  auto forward = [](const std::string& body) {
    return "import torch\nclass Model(torch.nn.Module):\n    def forward(self, a, b):\n        " +
           body + "\n";
  };
  Sig matmul = {"matmul"};
  EXPECT_EQ(OpSignature(forward("return torch.matmul(a, b)")), matmul);
  EXPECT_EQ(OpSignature(forward("return a @ b")), matmul);
  EXPECT_EQ(OpSignature(forward("return torch.mm(a, b)")), matmul);
  EXPECT_EQ(OpSignature(forward("return F.relu(a)")), OpSignature(forward("return a.relu()")));
  EXPECT_EQ(OpSignature(forward("return torch.amax(a, dim=1)")), Sig{"max"});
  EXPECT_EQ(OpSignature(forward("return -a")), Sig{});  // unary minus is no subtraction
  EXPECT_EQ(OpSignature("x = 1\n"), Sig{});             // no Model
}

TEST(OpSignature, SynthesizedProblemsReadAsTheirGraph) {
  Calibration cal;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Rng rng(seed);
    auto g =
        DrawGraph(DrawOptions{2,
                              DType::kF32,
                              {"linear", "conv2d", "relu", "softmax", "sum", "layer_norm", "gelu"},
                              ""},
                  rng);
    ASSERT_TRUE(g.ok());
    Sig want;
    for (const auto& op : OpNames(*g)) want.push_back(op);
    EXPECT_EQ(OpSignature(EmitProblem(*g, {}, "d")), want) << EmitProblem(*g, {}, "d");
  }
}

TEST(OpSignature, OurOwnProblems) {
  EXPECT_EQ(OpSignature(Read("problems/level1/relu.py")), Sig{"relu"});
  EXPECT_EQ(OpSignature(Read("problems/level2/gemm_bias_relu.py")), (Sig{"linear", "relu", "mul"}));
}

TEST(BenchmarkIndex, NearestBySignatureAndBySource) {
  BenchmarkIndex idx;
  std::string relu = Read("problems/level1/relu.py");
  std::string gemm = Read("problems/level2/gemm_bias_relu.py");
  idx.Add("level1/relu.py", relu);
  idx.Add("level2/gemm_bias_relu.py", gemm);
  idx.Add("level1/softmax.py", Read("problems/level1/softmax.py"));
  // The same computation with other names and sizes: distance 0 by signature, and the class
  // body's normalised tokens are the same too.
  std::string renamed = relu;
  renamed.replace(renamed.find("batch_size = 256"), 16, "rows = 17");
  for (size_t at; (at = renamed.find("batch_size")) != std::string::npos;) {
    renamed.replace(at, 10, "rows");
  }
  Nearest sig = idx.BySignature(OpSignature(renamed));
  EXPECT_EQ(sig.problem, "level1/relu.py");
  EXPECT_DOUBLE_EQ(sig.distance, 0.0);
  Nearest src = idx.BySource(renamed);
  EXPECT_EQ(src.problem, "level1/relu.py");
  EXPECT_DOUBLE_EQ(src.distance, 0.0);
  // One op more than gemm_bias_relu: 1 edit in 4.
  Nearest near = idx.BySignature({"linear", "relu", "mul", "sigmoid"});
  EXPECT_EQ(near.problem, "level2/gemm_bias_relu.py");
  EXPECT_DOUBLE_EQ(near.distance, 0.25);
  EXPECT_EQ(BenchmarkIndex().BySignature({"relu"}).problem, "");  // empty index
}

}  // namespace
}  // namespace kf::synth
