#include "common/extension_spec.h"

#include <gtest/gtest.h>

#include "common/hash.h"

namespace kf {
namespace {

TEST(ExtensionSpec, AcceptsLoadInlineArgumentShapes) {
  auto j = nlohmann::json::parse(R"({"name": "ext", "cpp_sources": "int f();",
      "cuda_sources": ["a", "b"], "functions": "f", "extra_cflags": ["-O3"],
      "extra_cuda_cflags": null, "with_cuda": null})");
  ExtensionSpec s;
  std::string err;
  ASSERT_TRUE(SpecFromJson(j, &s, &err)) << err;
  EXPECT_EQ(s.cpp_sources, std::vector<std::string>{"int f();"});
  EXPECT_EQ(s.cuda_sources.size(), 2u);
  EXPECT_EQ(s.functions, nlohmann::json::array({"f"}));
  EXPECT_FALSE(s.with_cuda.has_value());
}

TEST(ExtensionSpec, StringAndOneElementListGiveTheSameKey) {
  ExtensionSpec a, b;
  std::string err;
  ASSERT_TRUE(SpecFromJson({{"name", "e"}, {"cpp_sources", "x"}, {"functions", "f"}}, &a, &err));
  ASSERT_TRUE(SpecFromJson({{"name", "e"}, {"cpp_sources", {"x"}}, {"functions", {"f"}}}, &b, &err));
  EXPECT_EQ(Sha256Hex(CanonicalJson(a).dump()), Sha256Hex(CanonicalJson(b).dump()));
}

TEST(ExtensionSpec, SameNameDifferentCodeDiffers) {
  ExtensionSpec a, b;
  std::string err;
  ASSERT_TRUE(SpecFromJson({{"name", "elementwise_add"}, {"cpp_sources", "int a;"}}, &a, &err));
  ASSERT_TRUE(SpecFromJson({{"name", "elementwise_add"}, {"cpp_sources", "int b;"}}, &b, &err));
  EXPECT_NE(CanonicalJson(a).dump(), CanonicalJson(b).dump());
}

TEST(ExtensionSpec, RejectsBadFieldsByName) {
  ExtensionSpec s;
  std::string err;
  EXPECT_FALSE(SpecFromJson({{"cpp_sources", "x"}}, &s, &err));
  EXPECT_NE(err.find("name"), std::string::npos);
  EXPECT_FALSE(SpecFromJson({{"name", "e"}, {"cpp_sources", 3}}, &s, &err));
  EXPECT_NE(err.find("cpp_sources"), std::string::npos);
  EXPECT_FALSE(SpecFromJson({{"name", "e"}, {"functions", {{"f", 1}}}}, &s, &err));
  EXPECT_NE(err.find("functions"), std::string::npos);
  EXPECT_FALSE(SpecFromJson({{"name", "e"}, {"with_cuda", "yes"}}, &s, &err));
  EXPECT_NE(err.find("with_cuda"), std::string::npos);
}

TEST(Hash, Sha256KnownValue) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace kf
