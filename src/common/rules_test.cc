#include "common/rules.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

namespace kf {
namespace {

TEST(Rules, EveryTrickOnceWithAHint) {
  std::set<std::string> codes;
  for (const Rule& r : Rules()) {
    EXPECT_TRUE(codes.insert(r.code).second) << r.code << " twice";
    EXPECT_GT(std::string(r.hint).size(), 20u) << r.code;
    EXPECT_GT(std::string(r.catches).size(), 10u) << r.code;
    EXPECT_GT(std::string(r.stops).size(), 10u) << r.code;
  }
  for (int i = 1; i <= 20; ++i) {
    char code[8];
    snprintf(code, sizeof code, "H%02d", i);
    const Rule* r = FindRule(code);
    ASSERT_NE(r, nullptr) << code;
    EXPECT_FALSE(r->note) << code;
    EXPECT_EQ(RuleHint(code), r->hint);
  }
  EXPECT_EQ(FindRule("H99"), nullptr);
  EXPECT_EQ(RuleHint("H99"), "");
}

TEST(Rules, TritonWordingOnlyForCodesOfTheCatalog) {
  std::set<std::string> codes;
  for (const TritonRule& t : TritonRules()) {
    EXPECT_NE(FindRule(t.code), nullptr) << t.code;
    EXPECT_TRUE(codes.insert(t.code).second) << t.code << " twice";
    EXPECT_EQ(RuleHint(t.code, "triton"), t.hint);
    EXPECT_NE(RuleHint(t.code, "triton"), RuleHint(t.code)) << t.code;
  }
  // Codes without Triton wording read the same for both families.
  EXPECT_EQ(RuleHint("H08", "triton"), RuleHint("H08"));
  EXPECT_NE(RuleHint("H01", "triton").find("@triton.jit"), std::string::npos);
  EXPECT_NE(RuleHint("H01", "load_inline").find("load_inline"), std::string::npos);
}

// docs/RULES.md is the catalog: regenerate it with `kforge rules --markdown > docs/RULES.md`.
TEST(Rules, TheDocIsTheCatalog) {
  std::ifstream f(std::string(KFORGE_SOURCE_DIR) + "/docs/RULES.md");
  std::stringstream doc;
  doc << f.rdbuf();
  EXPECT_EQ(doc.str(), RulesMarkdown())
      << "docs/RULES.md differs from src/common/rules.cc: run kforge rules --markdown > "
         "docs/RULES.md";
}

}  // namespace
}  // namespace kf
