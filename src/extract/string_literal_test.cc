#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "extract/tokenizer.h"

namespace kf::extract {
namespace {

std::string Decoded(std::string_view raw) {
  StringValue v = DecodeStringLiteral(raw);
  EXPECT_TRUE(v.resolved) << raw << ": " << v.why;
  return v.value;
}

TEST(DecodeStringLiteral, QuoteStyles) {
  EXPECT_EQ(Decoded("'abc'"), "abc");
  EXPECT_EQ(Decoded("\"abc\""), "abc");
  EXPECT_EQ(Decoded("'''a'b''c'''"), "a'b''c");
  EXPECT_EQ(Decoded("\"\"\"a\"b\"\"\""), "a\"b");
  EXPECT_EQ(Decoded("''"), "");
  EXPECT_EQ(Decoded("''''''"), "");
  EXPECT_EQ(Decoded("u'x'"), "x");
}

TEST(DecodeStringLiteral, Escapes) {
  EXPECT_EQ(Decoded(R"('a\nb\tc\\d\'e\"f')"), "a\nb\tc\\d'e\"f");
  EXPECT_EQ(Decoded(R"('\x41\x7a\101\0\7')"), std::string("Az"
                                                          "A") +
                                                  std::string(1, '\0') + "\a");
  EXPECT_EQ(Decoded(R"('\u00e9\U0001F600')"), "\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(Decoded(R"('\r\v\f\a\b')"), "\r\v\f\a\b");
  EXPECT_EQ(Decoded(R"('\q\d')"), "\\q\\d");    // unknown escapes stay
  EXPECT_EQ(Decoded(R"('\777')"), "\xc7\xbf");  // octal 511 as a code point
}

TEST(DecodeStringLiteral, BytesKeepRawValues) {
  StringValue v = DecodeStringLiteral(R"(b'\xff\u1234\101')");
  EXPECT_TRUE(v.resolved);
  EXPECT_TRUE(v.is_bytes);
  EXPECT_EQ(v.value, "\xff\\u1234A");
}

TEST(DecodeStringLiteral, RawStringsKeepBackslashes) {
  EXPECT_EQ(Decoded(R"(r'a\nb\'')"), "a\\nb\\'");
  EXPECT_EQ(Decoded(R"(R"\\")"), "\\\\");
  EXPECT_EQ(Decoded("r'a\\\nb'"), "a\\\nb");
  EXPECT_EQ(Decoded(R"(rb'\x00')"), "\\x00");
}

TEST(DecodeStringLiteral, ContinuationDropsBreakButCountsSourceLine) {
  StringValue v = DecodeStringLiteral("'one \\\ntwo\\nthree'");
  EXPECT_EQ(v.value, "one two\nthree");
  EXPECT_EQ(v.line_offsets, (std::vector<int>{0, 1}));
}

TEST(DecodeStringLiteral, LineOffsetsFollowRealAndEscapedBreaks) {
  StringValue v = DecodeStringLiteral("\"\"\"\nint a;\\nint b;\n\nend\"\"\"");
  EXPECT_EQ(v.value, "\nint a;\nint b;\n\nend");
  // value lines: "", "int a;", "int b;", "", "end"
  EXPECT_EQ(v.line_offsets, (std::vector<int>{0, 1, 1, 2, 3}));
}

TEST(DecodeStringLiteral, CrLfInsideTripleQuotesIsOneNewline) {
  StringValue v = DecodeStringLiteral("'''a\r\nb\rc'''");
  EXPECT_EQ(v.value, "a\nb\nc");
  EXPECT_EQ(v.line_offsets, (std::vector<int>{0, 1, 2}));
}

TEST(DecodeStringLiteral, FStrings) {
  EXPECT_EQ(Decoded("f'no placeholders {{here}}'"), "no placeholders {here}");
  EXPECT_EQ(Decoded("rf'\\d{{2}}'"), "\\d{2}");
  StringValue v = DecodeStringLiteral("f'value {x}'");
  EXPECT_FALSE(v.resolved);
  EXPECT_EQ(v.why, "an f-string with placeholders");
  v = DecodeStringLiteral("F\"\"\"\n{{ok}} {bad}\"\"\"");
  EXPECT_FALSE(v.resolved);
}

TEST(DecodeStringLiteral, UndecodableEscapesAreUnresolved) {
  StringValue v = DecodeStringLiteral(R"('\N{BULLET}')");
  EXPECT_FALSE(v.resolved);
  EXPECT_EQ(v.why, "a \\N{...} escape");
  v = DecodeStringLiteral(R"('\x4')");
  EXPECT_FALSE(v.resolved);
  EXPECT_EQ(v.why, "a truncated \\x escape");
  v = DecodeStringLiteral(R"('\U00110000')");
  EXPECT_FALSE(v.resolved);
  v = DecodeStringLiteral("not a literal");
  EXPECT_FALSE(v.resolved);
  EXPECT_EQ(v.line_offsets, (std::vector<int>{0}));
}

TEST(DecodeStringLiteral, UnicodePassesThrough) {
  EXPECT_EQ(Decoded("'// π ≈ 3.14, 日本'"), "// π ≈ 3.14, 日本");
}

}  // namespace
}  // namespace kf::extract
