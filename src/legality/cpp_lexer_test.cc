#include "legality/cpp_lexer.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kf::legality {
namespace {

// A token's offset is the place its line and col name: callers cut the source text with it
// (eval's crash hint quotes a TORCH_CHECK call that spans lines).
TEST(CppLexer, OffsetIsWhereLineAndColPoint) {
  const std::string src =
      "// a comment\n#include <torch/extension.h>\nint f(int n) {\n"
      "  TORCH_CHECK(n > 0,\n      \"n = \", n);\n  return n;\n}\n";
  const std::vector<CppToken> toks = LexCpp(src);
  ASSERT_FALSE(toks.empty());
  for (const CppToken& t : toks) {
    size_t line_start = 0;
    for (int l = 1; l < t.line; ++l) line_start = src.find('\n', line_start) + 1;
    EXPECT_EQ(t.offset, line_start + t.col - 1) << t.text;
    if (t.kind == CppToken::Kind::kIdent || t.kind == CppToken::Kind::kPunct) {
      EXPECT_EQ(src.compare(t.offset, t.text.size(), t.text), 0) << t.text;
    }
  }
  auto check = std::find_if(toks.begin(), toks.end(),
                            [](const CppToken& t) { return t.text == "TORCH_CHECK"; });
  ASSERT_NE(check, toks.end());
  EXPECT_EQ(check->offset, src.find("TORCH_CHECK"));
}

}  // namespace
}  // namespace kf::legality
