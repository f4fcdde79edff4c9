#include "execute/runtime_rules.h"

#include <set>

#include <gtest/gtest.h>

namespace kf::execute {
namespace {

const std::set<std::string> kRuntimePlumbing = {"aten::empty", "aten::empty_like", "aten::contiguous"};

ProfileFindings Check(const nlohmann::json& p, int calls, bool libraries,
                      Policy policy = Policy::kStrict) {
  return CheckProfile(p, calls, {policy, &kRuntimePlumbing, libraries});
}

TEST(RuntimeRules, LibraryKernelsAreRecognised) {
  EXPECT_TRUE(IsLibraryKernel("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32"));
  EXPECT_TRUE(IsLibraryKernel("void cutlass::Kernel<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>(...)"));
  EXPECT_TRUE(IsLibraryKernel("nvjet_tst_128x64_64x8_2x1_v_bz_TNN"));
  EXPECT_TRUE(IsLibraryKernel("ampere_sgemm_128x64_nn"));
  EXPECT_TRUE(IsLibraryKernel("void cudnn::winograd_nonfused::winogradForwardData4x4<float>(...)"));
  EXPECT_FALSE(IsLibraryKernel("relu_kernel(float const*, float*, long)"));
  EXPECT_FALSE(IsLibraryKernel("my_gemm_kernel(float const*, float const*, float*, int)"));
  EXPECT_FALSE(IsLibraryKernel("tiled_sgemm(float const*, float*, int)"));
}

TEST(RuntimeRules, TorchComputeInForwardIsH01) {
  nlohmann::json p = {{"aten", {"aten::empty_like", "aten::matmul", "aten::relu"}},
                      {"kernels", nlohmann::json::array()}};
  auto d = Check(p, 1, false).cheats;
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, "H01");
  EXPECT_NE(d[0].message.find("aten::matmul"), std::string::npos);
  EXPECT_NE(d[0].message.find("aten::relu"), std::string::npos);
  EXPECT_EQ(d[0].message.find("empty_like"), std::string::npos);
}

TEST(RuntimeRules, LibraryKernelsAreH04UnlessAllowed) {
  nlohmann::json p = {{"aten", {"aten::empty"}}, {"kernels", {"sm90_xmma_gemm_f32", "k1(int)"}}};
  auto d = Check(p, 2, false).cheats;
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, "H04");
  EXPECT_TRUE(Check(p, 2, true).cheats.empty());
}

TEST(RuntimeRules, ExtensionNeverCalledIsH02) {
  nlohmann::json p = {{"aten", nlohmann::json::array()}, {"kernels", nlohmann::json::array()}};
  auto d = Check(p, 0, false).cheats;
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].code, "H02");
}

TEST(RuntimeRules, HonestProfileIsClean) {
  nlohmann::json p = {{"aten", {"aten::empty_like", "aten::contiguous"}},
                      {"kernels", {"relu_kernel_vec4(float4 const*, float4*, long)"}}};
  EXPECT_TRUE(Check(p, 1, false).cheats.empty());
}

// KernelBench's acceptance: PyTorch computes beside the candidate's kernels (a convolution kept,
// its epilogue fused), and its cuDNN kernels run; the verdict lists the ops instead.
TEST(RuntimeRules, KernelBenchPolicyListsPyTorchComputeInsteadOfH01) {
  nlohmann::json p = {{"aten", {"aten::empty_like", "aten::conv2d", "aten::addmm", "aten::conv2d"}},
                      {"kernels", {"cudnn::winograd_nonfused::winogradForwardData4x4"}}};
  auto f = Check(p, 1, false, Policy::kKernelBench);
  EXPECT_TRUE(f.cheats.empty());
  EXPECT_EQ(f.pytorch_ops, (std::vector<std::string>{"aten::conv2d", "aten::addmm"}));
  auto strict = Check(p, 1, false);
  ASSERT_EQ(strict.cheats.size(), 2u);
  EXPECT_EQ(strict.cheats[0].code, "H01");
  EXPECT_EQ(strict.cheats[1].code, "H04");
  EXPECT_EQ(strict.pytorch_ops, f.pytorch_ops);
}

// A decoy: PyTorch does all the work and the extension is never called. KernelBench's harness
// accepts it; kforge does not, under either policy.
TEST(RuntimeRules, ExtensionNeverCalledIsH02UnderBothPolicies) {
  nlohmann::json p = {{"aten", {"aten::matmul"}}, {"kernels", nlohmann::json::array()}};
  auto f = Check(p, 0, false, Policy::kKernelBench);
  ASSERT_EQ(f.cheats.size(), 1u);
  EXPECT_EQ(f.cheats[0].code, "H02");
}

// except at 10 (body to 12), finally at 13 (body to 14).
const std::vector<extract::GuardBlock> kGuards = {{10, 12, false}, {13, 14, true}};

TEST(RuntimeRules, AnExceptLineThatRanIsH03) {
  auto d = CheckGuards({{"lines", {11}}, {"raised", true}}, kGuards, "trial 2");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->code, "H03");
  EXPECT_EQ(d->line, 10);
  EXPECT_NE(d->message.find("except branch at line 10 ran during trial 2"), std::string::npos);
}

TEST(RuntimeRules, AGuardThatNeverFiresIsFine) {
  EXPECT_FALSE(CheckGuards({{"lines", nlohmann::json::array()}, {"raised", false}}, kGuards, "t"));
  EXPECT_FALSE(CheckGuards(nlohmann::json(), kGuards, "t"));  // no report: nothing watched
  EXPECT_FALSE(CheckGuards({{"lines", {9, 15}}, {"raised", true}}, kGuards, "t"));
  EXPECT_FALSE(CheckGuards({{"lines", {"11"}}}, kGuards, "t"));  // not a line number
}

TEST(RuntimeRules, FinallyCountsOnlyAfterAnException) {
  EXPECT_FALSE(CheckGuards({{"lines", {14}}, {"raised", false}}, kGuards, "t"));
  auto d = CheckGuards({{"lines", {14}}, {"raised", true}}, kGuards, "the ablation call");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->line, 13);
  EXPECT_NE(d->message.find("finally block at line 13"), std::string::npos);
}

}  // namespace
}  // namespace kf::execute
