// The run-time decisions on Triton candidates, on fake host reports: launch evidence, the
// ghost replay, the hooks, compile time and compile errors.
#include "execute/jit_rules.h"

#include <gtest/gtest.h>

#include <set>

#include "execute/runtime_rules.h"

namespace kf::execute {
namespace {
using nlohmann::json;

const std::set<std::string> kPlumbing = {"aten::empty", "aten::empty_like"};
const backend::Path& Triton() { return *backend::FindPath("cuda", backend::Family::kTriton); }
const backend::Path& TritonCpu() { return *backend::FindPath("cpu", backend::Family::kTriton); }

TEST(TritonEvidence, NoLaunchInTheProfiledForwardIsH02UnderBothPolicies) {
  const json profile = {{"aten", {"aten::empty_like"}}, {"kernels", json::array()}};
  for (Policy policy : {Policy::kStrict, Policy::kKernelBench}) {
    auto f = CheckProfile(profile, 0, {policy, &kPlumbing, false, &Triton()});
    ASSERT_EQ(f.cheats.size(), 1u);
    EXPECT_EQ(f.cheats[0].code, "H02");
    EXPECT_NE(f.cheats[0].message.find("@triton.jit"), std::string::npos);
    EXPECT_NE(f.cheats[0].hint.find("@triton.jit"), std::string::npos);
  }
  EXPECT_TRUE(
      CheckProfile(profile, 3, {Policy::kStrict, &kPlumbing, false, &Triton()}).cheats.empty());
}

TEST(TritonEvidence, TorchBesideALaunchedKernelIsH01UnderStrictListedUnderKernelBench) {
  const json profile = {{"aten", {"aten::empty_like", "aten::softmax"}},
                        {"kernels", json::array()}};
  auto strict = CheckProfile(profile, 1, {Policy::kStrict, &kPlumbing, false, &Triton()});
  ASSERT_EQ(strict.cheats.size(), 1u);
  EXPECT_EQ(strict.cheats[0].code, "H01");
  EXPECT_NE(strict.cheats[0].hint.find("@triton.jit"), std::string::npos);
  auto kb = CheckProfile(profile, 1, {Policy::kKernelBench, &kPlumbing, false, &Triton()});
  EXPECT_TRUE(kb.cheats.empty());
  EXPECT_EQ(kb.pytorch_ops, std::vector<std::string>{"aten::softmax"});
}

TEST(TritonEvidence, CpuStandInHasNoVendorKernels) {
  // The CPU profiler names no device kernels; a kernel name there is not a library call.
  const json profile = {{"aten", json::array()}, {"kernels", {"sm90_xmma_gemm_f32"}}};
  EXPECT_TRUE(
      CheckProfile(profile, 1, {Policy::kStrict, &kPlumbing, false, &TritonCpu()}).cheats.empty());
  EXPECT_EQ(CheckProfile(profile, 1, {Policy::kStrict, &kPlumbing, false, &Triton()}).cheats.size(),
            1u);
  EXPECT_FALSE(IsLibraryKernel("sm90_xmma_gemm_f32", backend::FindDevice("cpu")));
  EXPECT_TRUE(IsLibraryKernel("sm90_xmma_gemm_f32", backend::FindDevice("cuda")));
}

TEST(GhostReplay, AnAnswerThatSurvivesNoOpLaunchesIsH02) {
  auto d = CheckAblation(true, Triton());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->code, "H02");
  EXPECT_NE(d->message.find("ghost replay"), std::string::npos);
  EXPECT_FALSE(CheckAblation(false, Triton()).has_value());
  // load_inline's ablation keeps its own words.
  auto li = CheckAblation(true, *backend::FindPath("cpu", backend::Family::kLoadInline));
  ASSERT_TRUE(li.has_value());
  EXPECT_NE(li->message.find("extension made a no-op"), std::string::npos);
  EXPECT_EQ(li->hint, "Compute the output in your own kernels, not beside them.");
}

TEST(LaunchHooks, WithoutTheLaunchHookNothingCanBeJudged) {
  EXPECT_FALSE(MissingLaunchHooks(
                   {{"ok", true},
                    {"jit", {{"version", "3.2.0"}, {"hooks", {"launch", "compile", "autotune"}}}}})
                   .has_value());
  auto no_launch =
      MissingLaunchHooks({{"ok", true}, {"jit", {{"version", "9.9"}, {"hooks", {"compile"}}}}});
  ASSERT_TRUE(no_launch.has_value());
  EXPECT_NE(no_launch->find("9.9"), std::string::npos);
  EXPECT_TRUE(MissingLaunchHooks({{"ok", true}}).has_value());
}

TEST(JitStats, CumulativeReportsKeepTheLargest) {
  JitStats s;
  AddJitReport({{"ok", true}}, &s);
  AddJitReport({{"jit", {{"compiles", 0}, {"compile_ms", 0.0}, {"launches", 0}}}}, &s);
  AddJitReport({{"jit", {{"compiles", 2}, {"compile_ms", 812.5}, {"launches", 3}}}}, &s);
  AddJitReport({{"jit", {{"compiles", 2}, {"compile_ms", 812.5}, {"launches", 40}}}}, &s);
  EXPECT_EQ(s.compiles, 2);
  EXPECT_DOUBLE_EQ(s.compile_ms, 812.5);
  EXPECT_EQ(s.launches, 40);
}

TEST(JitCompileError, LocatedAtTheCandidatesLine) {
  const std::string code =
      "import triton\nimport triton.language as tl\n\n@triton.jit\n"
      "def k(x, n, B: tl.constexpr):\n    o = tl.arange(0, B)\n    tl.store(x + o, tl.bogus(o))\n";
  json reply = {{"ok", false},
                {"kind", "jit_compile_error"},
                {"kernel", "k"},
                {"message",
                 "at 3:20:def k(x, n, B: tl.constexpr):\n    o = tl.arange(0, B)\n"
                 "    tl.store(x + o, tl.bogus(o))\n                    ^\n"
                 "AttributeError(\"module 'triton.language' has no attribute 'bogus'\")"}};
  Diagnostic d = JitCompileDiagnostic(reply, code);
  EXPECT_EQ(d.stage, "build");
  EXPECT_EQ(d.code, "compile_error");
  EXPECT_EQ(d.line, 7);
  EXPECT_EQ(d.col, 21);
  EXPECT_NE(d.message.find("the kernel k"), std::string::npos);
  EXPECT_NE(d.message.find("bogus"), std::string::npos);
  // No position in the message: unlocated, still a compile error with Triton's words.
  Diagnostic u =
      JitCompileDiagnostic({{"kind", "jit_compile_error"}, {"message", "ptxas died"}}, code);
  EXPECT_EQ(u.line, 0);
  EXPECT_NE(u.message.find("ptxas died"), std::string::npos);
  // No position, but the name Triton refused (Triton 3.6 on an H100): located at its call.
  Diagnostic r = JitCompileDiagnostic(
      {{"kind", "jit_compile_error"},
       {"kernel", "k"},
       {"message",
        "RuntimeError: Unsupported function referenced: <function bogus at 0x7fb1c773e180>"}},
      code);
  EXPECT_EQ(r.line, 7);
  EXPECT_EQ(r.col, 24);  // `bogus`, where the located form above gives `tl.bogus`
}

}  // namespace
}  // namespace kf::execute
