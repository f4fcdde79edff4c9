// The artifact key's input: light-headers builds that may rewrite get keys of their own; every
// other build keeps the key a plain build has.
#include <gtest/gtest.h>

#include "build/build.h"

namespace kf::build {
namespace {

ExtensionSpec CudaSpec() {
  ExtensionSpec s;
  s.name = "relu_ext";
  s.cpp_sources = {"torch::Tensor relu(torch::Tensor x);"};
  s.cuda_sources = {"#include <torch/extension.h>\n__global__ void k() {}\n"};
  s.functions = nlohmann::json::array({"relu"});
  return s;
}

const nlohmann::json kToolchain = {{"torch", "2.11.0"}, {"nvcc", "13.0"}, {"arch", "9.0"}};

TEST(ArtifactKey, LightAndPlainBuildsOfARewritableCallNeverShareAKey) {
  ExtensionSpec s = CudaSpec();
  std::string plain = ArtifactKey(kToolchain, LoadInlineKeyInput(s, ""));
  std::string light = ArtifactKey(kToolchain, LoadInlineKeyInput(s, "rules-v1"));
  std::string light2 = ArtifactKey(kToolchain, LoadInlineKeyInput(s, "rules-v2"));
  EXPECT_NE(plain, light);
  EXPECT_NE(light, light2);  // new rewrite rules: light artifacts are built again
  EXPECT_EQ(light, ArtifactKey(kToolchain, LoadInlineKeyInput(s, "rules-v1")));
}

TEST(ArtifactKey, PlainKeysAreWhatTheyWereAndNothingToRewriteSharesThem) {
  ExtensionSpec s = CudaSpec();
  // Off: the key input is the call alone, as before light headers existed (old caches hold).
  EXPECT_EQ(LoadInlineKeyInput(s, ""), nlohmann::json({{"load_inline", CanonicalJson(s)}}));
  // A CPU build (no CUDA sources) or CUDA sources without the include: the same build either way.
  ExtensionSpec cpu = s;
  cpu.cuda_sources.clear();
  cpu.cpp_sources = {"#include <torch/extension.h>\nint f() { return 1; }"};
  EXPECT_FALSE(LightHeadersMayApply(cpu));
  EXPECT_EQ(ArtifactKey(kToolchain, LoadInlineKeyInput(cpu, "rules-v1")),
            ArtifactKey(kToolchain, LoadInlineKeyInput(cpu, "")));
  ExtensionSpec bare = s;
  bare.cuda_sources = {"#include <torch/types.h>\n__global__ void k() {}\n"};
  EXPECT_FALSE(LightHeadersMayApply(bare));
  EXPECT_EQ(LoadInlineKeyInput(bare, "rules-v1"), LoadInlineKeyInput(bare, ""));
  // Any mention counts here (the runner decides what is a real include).
  ExtensionSpec second = s;
  second.cuda_sources = {"__global__ void k() {}\n", "// torch/extension.h\n"};
  EXPECT_TRUE(LightHeadersMayApply(second));
}

TEST(ArtifactKey, SplitBuildsOfALaunchingCallGetKeysOfTheirOwn) {
  ExtensionSpec s = CudaSpec();
  s.cuda_sources.push_back("void go() { k<<<1, 1>>>(); }\n");
  ASSERT_TRUE(SplitBuildMayApply(s));
  const std::string light = ArtifactKey(kToolchain, LoadInlineKeyInput(s, "rules-v1"));
  const std::string split = ArtifactKey(kToolchain, LoadInlineKeyInput(s, "rules-v1", "split-v1"));
  EXPECT_NE(light, split);
  EXPECT_NE(split, ArtifactKey(kToolchain, LoadInlineKeyInput(s, "rules-v1", "split-v2")));
  EXPECT_EQ(split, ArtifactKey(kToolchain, LoadInlineKeyInput(s, "rules-v1", "split-v1")));
  // Off ("" rules), or no launch to split: the key the build had without split builds.
  EXPECT_EQ(LoadInlineKeyInput(s, "rules-v1", ""), LoadInlineKeyInput(s, "rules-v1"));
  ExtensionSpec none = CudaSpec();
  EXPECT_FALSE(SplitBuildMayApply(none));
  EXPECT_EQ(LoadInlineKeyInput(none, "rules-v1", "split-v1"), LoadInlineKeyInput(none, "rules-v1"));
}

TEST(ArtifactKey, CachedBindingsOfACallThatBindsFunctionsGetKeysOfTheirOwn) {
  ExtensionSpec s = CudaSpec();
  s.cuda_sources.clear();
  const std::string plain = ArtifactKey(kToolchain, LoadInlineKeyInput(s, "rules-v1"));
  const std::string cached = ArtifactKey(kToolchain, LoadInlineKeyInput(s, "rules-v1", "", "b-v1"));
  EXPECT_NE(plain, cached);
  EXPECT_NE(cached, ArtifactKey(kToolchain, LoadInlineKeyInput(s, "rules-v1", "", "b-v2")));
  // Off, or nothing bound (the candidate writes its own PYBIND11_MODULE): the plain key.
  EXPECT_EQ(LoadInlineKeyInput(s, "rules-v1", "", ""), LoadInlineKeyInput(s, "rules-v1"));
  ExtensionSpec own = s;
  own.functions = nullptr;
  EXPECT_EQ(LoadInlineKeyInput(own, "rules-v1", "", "b-v1"), LoadInlineKeyInput(own, "rules-v1"));
}

}  // namespace
}  // namespace kf::build
