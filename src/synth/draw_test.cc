// The op table, drawing, hashing, sizing, variants and the Python written for a graph.
#include <gtest/gtest.h>

#include <set>

#include "extract/python_parse.h"
#include "synth/internal.h"
#include "synth/ops.h"

namespace kf::synth {
namespace {

Calibration FlatCalibration() {
  Calibration c;
  c.fallback.points = {{1e3, 0.01}, {1e9, 1000}};         // 1 GB/s, 10 us a call
  c.fallback_heavy.points = {{1e3, 0.01}, {1e10, 1000}};  // 10 GFLOP/s
  return c;
}

bool Parses(const std::string& src) {
  extract::ParsedModule m;
  extract::SyntaxError e;
  return extract::ParseModule(src, &m, &e);
}

TEST(Rng, SameSeedSameDrawsAndInRange) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    int64_t x = a.Uniform(-3, 7);
    EXPECT_EQ(x, b.Uniform(-3, 7));
    EXPECT_GE(x, -3);
    EXPECT_LE(x, 7);
    differs = differs || c.Uniform(-3, 7) != x;
  }
  EXPECT_TRUE(differs);
  Rng d(1);
  std::set<int64_t> seen;
  for (int i = 0; i < 200; ++i) seen.insert(d.Uniform(0, 3));
  EXPECT_EQ(seen.size(), 4u);  // every value of a small range comes up
}

TEST(OpTable, CoversTheIssuesFamilies) {
  std::set<std::string> categories;
  for (const auto& op : Ops()) categories.insert(op.category);
  EXPECT_GE(Ops().size(), 40u);
  for (const char* c : {"activation", "elementwise", "binary", "reduction", "softmax", "matmul",
                        "conv", "pool", "norm", "attention", "index", "cumulative"}) {
    EXPECT_TRUE(categories.count(c)) << c;
  }
  for (const char* name : {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                           "conv_transpose3d", "bmm", "linear", "matmul", "logsumexp",
                           "scatter_add", "cumsum", "layer_norm", "group_norm"}) {
    EXPECT_NE(FindOp(name), nullptr) << name;
  }
}

// Every op on its own: a graph that infers, a problem file our parser reads, a canonical hash.
TEST(OpTable, EveryOpMakesAProblem) {
  for (const auto& op : Ops()) {
    for (DType dt : {DType::kF32, DType::kBF16}) {
      if (!(op.dtypes & DTypeBit(dt))) continue;
      Rng rng(7);
      DrawOptions d;
      d.only = op.name;
      d.dtype = dt;
      auto g = DrawGraph(d, rng);
      ASSERT_TRUE(g.ok()) << op.name << ": " << g.status().message();
      ASSERT_EQ(g->nodes.size(), 1u);
      auto inf = Infer(*g, MainValues(*g));
      ASSERT_TRUE(inf.ok()) << op.name;
      std::string src = EmitProblem(*g, {}, op.name);
      EXPECT_TRUE(Parses(src)) << src;
      EXPECT_NE(src.find("class Model(nn.Module):"), std::string::npos);
      EXPECT_NE(src.find("def get_init_inputs():"), std::string::npos);
      if (dt == DType::kBF16) {
        EXPECT_NE(src.find("dtype=dtype"), std::string::npos) << src;
      }
      EXPECT_EQ(CanonicalHash(*g).size(), 64u);
    }
  }
}

TEST(DrawGraph, LevelsHaveTheirShape) {
  for (int level = 1; level <= 3; ++level) {
    for (uint64_t seed = 0; seed < 30; ++seed) {
      Rng rng(seed);
      auto g = DrawGraph(DrawOptions{level, DType::kF32, {}, ""}, rng);
      ASSERT_TRUE(g.ok()) << level << " " << seed << ": " << g.status().message();
      size_t n = g->nodes.size();
      int heavy = 0;
      for (const auto& node : g->nodes) heavy += FindOp(node.op)->heavy ? 1 : 0;
      if (level == 1) {
        EXPECT_EQ(n, 1u);
      }
      if (level == 2) {
        EXPECT_GE(n, 2u);
        EXPECT_LE(n, 5u);
        EXPECT_TRUE(FindOp(g->nodes[0].op)->heavy) << g->nodes[0].op;
      }
      if (level == 3) {
        EXPECT_GE(n, 5u);
        EXPECT_LE(n, 8u);
        EXPECT_GE(heavy, 2);
      }
      EXPECT_TRUE(Parses(EmitProblem(*g, {}, "x"))) << EmitProblem(*g, {}, "x");
    }
  }
}

TEST(DrawGraph, SameSeedSameGraph) {
  for (int level = 1; level <= 3; ++level) {
    Rng a(99), b(99);
    auto g1 = DrawGraph(DrawOptions{level, DType::kF32, {}, ""}, a);
    auto g2 = DrawGraph(DrawOptions{level, DType::kF32, {}, ""}, b);
    ASSERT_TRUE(g1.ok() && g2.ok());
    EXPECT_EQ(EmitProblem(*g1, {}, "d"), EmitProblem(*g2, {}, "d"));
  }
}

TEST(DrawGraph, AllowedOpsOnly) {
  std::set<std::string> allowed = {"linear", "relu", "sum", "softmax"};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Rng rng(seed);
    auto g = DrawGraph(DrawOptions{2, DType::kF32, {allowed.begin(), allowed.end()}, ""}, rng);
    ASSERT_TRUE(g.ok()) << g.status().message();
    for (const auto& n : g->nodes) EXPECT_TRUE(allowed.count(n.op)) << n.op;
  }
}

// relu(linear(x)): the hash ignores sizes and sees parameters and wiring.
Graph LinearRelu(int64_t batch, int64_t features, double slope = 0) {
  Graph g;
  Rng rng(1);
  Builder b(&g, &rng);
  int bs = b.NewVar("batch_size", VarRole::kBatch, batch);
  int f = b.NewVar("features", VarRole::kFeature, features);
  int x = b.NewInput({bs, f});
  EXPECT_TRUE(b.Apply("linear", x));
  EXPECT_TRUE(b.Apply(slope > 0 ? "leaky_relu" : "relu", b.last()));
  if (slope > 0) g.nodes.back().reals["slope"] = slope;
  return g;
}

TEST(CanonicalHash, SizesDoNotCountParametersDo) {
  EXPECT_EQ(CanonicalHash(LinearRelu(16, 128)), CanonicalHash(LinearRelu(64, 512)));
  EXPECT_NE(CanonicalHash(LinearRelu(16, 128)), CanonicalHash(LinearRelu(16, 128, 0.1)));
  EXPECT_NE(CanonicalHash(LinearRelu(16, 128, 0.2)), CanonicalHash(LinearRelu(16, 128, 0.1)));
  Graph bf = LinearRelu(16, 128);
  bf.dtype = DType::kBF16;
  EXPECT_NE(CanonicalHash(bf), CanonicalHash(LinearRelu(16, 128)));
}

TEST(CanonicalHash, CommutativeOperandsInEitherOrder) {
  auto make = [](bool swap, const std::string& op) {
    Graph g;
    Rng rng(1);
    Builder b(&g, &rng);
    int bs = b.NewVar("batch_size", VarRole::kBatch, 8);
    int f = b.NewVar("features", VarRole::kFeature, 64);
    int x = b.NewInput({bs, f});
    int y = b.NewInput({bs, f});
    EXPECT_TRUE(b.Apply("relu", x));
    int r = b.last();
    Node n;
    n.op = op;
    n.args = swap ? std::vector<int>{y, r} : std::vector<int>{r, y};
    n.value = static_cast<int>(g.values.size());
    g.values.push_back({false, static_cast<int>(g.nodes.size())});
    g.nodes.push_back(n);
    g.output = n.value;
    return g;
  };
  EXPECT_EQ(CanonicalHash(make(false, "add")), CanonicalHash(make(true, "add")));
  EXPECT_NE(CanonicalHash(make(false, "sub")), CanonicalHash(make(true, "sub")));
}

TEST(FreeVars, ParametersFixTheirSizes) {
  Graph g = LinearRelu(16, 128);
  auto inf = Infer(g, MainValues(g));
  ASSERT_TRUE(inf.ok());
  uint64_t free = FreeVars(g, *inf);
  // batch_size (0) is free; features (1) and out_features (2) are a weight's shape.
  EXPECT_EQ(free, uint64_t{1});
  std::string src = EmitProblem(g, {}, "x");
  EXPECT_NE(src.find("def __init__(self, features, out_features):"), std::string::npos) << src;
  EXPECT_NE(src.find("return [features, out_features]"), std::string::npos) << src;
}

TEST(SizeGraph, LandsNearTheTargetOrAtTheMemoryBound) {
  Calibration cal = FlatCalibration();
  for (int level = 1; level <= 3; ++level) {
    for (uint64_t seed = 0; seed < 10; ++seed) {
      Rng rng(seed);
      auto g = DrawGraph(DrawOptions{level, DType::kF32, {}, ""}, rng);
      ASSERT_TRUE(g.ok());
      const double target = 5, max_bytes = 256.0 * (1 << 20);
      ASSERT_TRUE(SizeGraph(&*g, target, max_bytes, cal).ok());
      auto inf = Infer(*g, MainValues(*g));
      ASSERT_TRUE(inf.ok());
      double ms = PredictMs(*g, *inf, cal), bytes = PeakBytes(*g, *inf);
      EXPECT_LE(bytes, max_bytes);
      // Each ladder step changes the time by at most ~1.5x per free size: within 2x, unless a
      // size reached its end (1, or memory).
      bool near = ms > target / 2 && ms < target * 2;
      bool at_bound = bytes > max_bytes / 3 || ms > target;
      EXPECT_TRUE(near || at_bound) << level << " " << seed << ": " << ms << " ms";
    }
  }
}

TEST(DrawVariants, OnlyFreeSizesChangeAndEveryVariantInfers) {
  Calibration cal = FlatCalibration();
  int with_variants = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    Rng rng(seed);
    auto g = DrawGraph(DrawOptions{2, DType::kF32, {}, ""}, rng);
    ASSERT_TRUE(g.ok());
    ASSERT_TRUE(SizeGraph(&*g, 1, 1 << 28, cal).ok());
    auto inf = Infer(*g, MainValues(*g));
    uint64_t free = FreeVars(*g, *inf);
    auto vs = DrawVariants(*g, 2, 1 << 28, rng);
    with_variants += vs.empty() ? 0 : 1;
    for (const auto& v : vs) {
      EXPECT_FALSE(v.empty());
      for (const auto& [var, val] : v) {
        EXPECT_TRUE(free & (uint64_t{1} << var)) << g->vars[var].name;
        EXPECT_NE(val, g->vars[var].value);
      }
      EXPECT_TRUE(Infer(*g, ValuesOf(*g, v)).ok());
    }
    std::string src = EmitProblem(*g, vs, "x");
    EXPECT_EQ(src.find("KFORGE_SHAPE_VARIANTS") != std::string::npos, !vs.empty());
  }
  EXPECT_GT(with_variants, 20);  // most level-2 graphs have a free batch size at least
}

TEST(Emit, IndexInputsAreRandint) {
  Graph g;
  Rng rng(3);
  Builder b(&g, &rng);
  int bs = b.NewVar("batch_size", VarRole::kBatch, 8);
  int f = b.NewVar("features", VarRole::kFeature, 64);
  int x = b.NewInput({bs, f});
  ASSERT_TRUE(b.Apply("gather", x));
  std::string src = EmitProblem(g, {}, "gather");
  EXPECT_NE(src.find("idx = torch.randint(0, features, (batch_size, features))"), std::string::npos)
      << src;
  EXPECT_NE(src.find("return torch.gather(x, 1, idx)"), std::string::npos) << src;
  EXPECT_NE(src.find("def forward(self, x, idx):"), std::string::npos) << src;
}

}  // namespace
}  // namespace kf::synth
