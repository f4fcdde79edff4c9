#include "similarity/similarity.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kf::similarity {
namespace {

TEST(NormalizedPythonTokens, NamesNumbersCommentsAndDocstringsDoNotCount) {
  const char* a =
      "\"\"\"ReLU.\"\"\"\nimport torch\nbatch = 16  # rows\n"
      "def forward(self, x):\n    return torch.relu(x * 2.0)\n";
  const char* b =
      "\"\"\"Another docstring.\"\"\"\nimport torch\nn_rows = 4096\n"
      "def forward(self, inp):\n    # a comment\n    return torch.relu(inp * 0.5)\n";
  EXPECT_EQ(NormalizedPythonTokens(a), NormalizedPythonTokens(b));
  // The API name after '.' is kept: a different op is a different stream.
  std::string c = std::string(a);
  c.replace(c.find("relu"), 4, "gelu");
  EXPECT_NE(NormalizedPythonTokens(a), NormalizedPythonTokens(c));
  auto t = NormalizedPythonTokens(a);
  EXPECT_NE(std::find(t.begin(), t.end(), "relu"), t.end());
  EXPECT_NE(std::find(t.begin(), t.end(), "torch"), t.end());
  EXPECT_EQ(std::find(t.begin(), t.end(), "batch"), t.end());
  EXPECT_EQ(std::find(t.begin(), t.end(), "x"), t.end());
}

TEST(KernelTokens, KernelSourceStringsAreLexedAsCpp) {
  auto make = [](const std::string& var) {
    return "import torch\nsrc = '''\n__global__ void k(const float* " + var +
           ", int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) out[i] = " +
           var + "[i] > 0 ? " + var + "[i] : 0;  // relu\n}\n'''\n";
  };
  auto t = KernelTokens(make("in"));
  for (const char* want : {"__global__", "blockIdx", "threadIdx", "if", "float"}) {
    EXPECT_NE(std::find(t.begin(), t.end(), want), t.end()) << want;
  }
  EXPECT_EQ(std::find(t.begin(), t.end(), "STR"), t.end());  // the source was not one token
  // Renaming a C++ variable changes nothing; a different loop structure does.
  EXPECT_EQ(KernelTokens(make("in")), KernelTokens(make("src_ptr")));
  std::string other = make("in");
  other.replace(other.find("if (i < n)"), 10, "for (; i < n; i += 4)");
  EXPECT_NE(KernelTokens(make("in")), KernelTokens(other));
}

TEST(KernelTokens, ModelReplyUsesItsFencedCode) {
  std::string code = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n";
  EXPECT_EQ(KernelTokens("Here it is.\n\n```python\n" + code + "```\n"), KernelTokens(code));
}

TEST(Shingles, CountsDistinctWindows) {
  std::vector<std::string> t = {"a", "b", "c", "d", "e"};
  EXPECT_EQ(Shingles(t, 2).size(), 4u);
  EXPECT_EQ(Shingles(t, 5).size(), 1u);
  EXPECT_EQ(Shingles(t, 9).size(), 1u);  // shorter than n: the whole stream
  EXPECT_TRUE(Shingles({}, 3).empty());
  EXPECT_EQ(Shingles({"a", "b", "a", "b", "a", "b"}, 2).size(), 2u);  // "a b" and "b a"
  // Token boundaries count: "ab"+"c" is not "a"+"bc".
  EXPECT_NE(Shingles({"ab", "c"}, 2), Shingles({"a", "bc"}, 2));
}

TEST(Jaccard, ByHand) {
  EXPECT_DOUBLE_EQ(Jaccard({1, 2, 3}, {2, 3, 4}), 0.5);
  EXPECT_DOUBLE_EQ(Jaccard({1, 2}, {3}), 0.0);
  EXPECT_DOUBLE_EQ(Jaccard({}, {}), 1.0);
  EXPECT_DOUBLE_EQ(Jaccard({7}, {7}), 1.0);
}

TEST(MinHash, EstimatesJaccardWithinItsError) {
  // A = 0..1499, B = 500..1999: J = 1000/2000 = 0.5.
  std::vector<uint64_t> a, b;
  for (uint64_t i = 0; i < 1500; ++i) a.push_back(i * 7919);
  for (uint64_t i = 500; i < 2000; ++i) b.push_back(i * 7919);
  const int k = 256;
  double est = EstimatedJaccard(MinHash(a, k), MinHash(b, k));
  double se = std::sqrt(0.5 * 0.5 / k);
  EXPECT_NEAR(est, Jaccard(a, b), 4 * se);
  EXPECT_DOUBLE_EQ(EstimatedJaccard(MinHash(a, k), MinHash(a, k)), 1.0);
  EXPECT_EQ(MinHash(a, k), MinHash(a, k));  // fixed seeds: the same signature every time
  EXPECT_EQ(MinHash(a, 16).size(), 16u);
}

TEST(NormalizedEditDistance, ByHand) {
  EXPECT_DOUBLE_EQ(NormalizedEditDistance({"a", "b", "c"}, {"a", "b", "c"}), 0.0);
  EXPECT_DOUBLE_EQ(NormalizedEditDistance({"a", "b", "c"}, {"a", "b", "d"}), 1.0 / 3);
  EXPECT_DOUBLE_EQ(NormalizedEditDistance({"a", "b", "c"}, {"b", "c"}), 1.0 / 3);
  EXPECT_DOUBLE_EQ(NormalizedEditDistance({}, {"x"}), 1.0);
  EXPECT_DOUBLE_EQ(NormalizedEditDistance({}, {}), 0.0);
  EXPECT_DOUBLE_EQ(NormalizedEditDistance({"relu"}, {"gelu"}), 1.0);
}

}  // namespace
}  // namespace kf::similarity
