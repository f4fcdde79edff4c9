#include "extract/tokenizer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace kf::extract {
namespace {

using K = TokenKind;

std::vector<Token> Lex(std::string_view src) {
  std::vector<Token> toks;
  SyntaxError err;
  EXPECT_TRUE(Tokenize(src, &toks, &err)) << err.message << " at " << err.line << ":" << err.col;
  return toks;
}

SyntaxError LexError(std::string_view src) {
  std::vector<Token> toks;
  SyntaxError err;
  EXPECT_FALSE(Tokenize(src, &toks, &err)) << "expected an error for: " << src;
  return err;
}

// "KIND:text" for each token, for compact whole-stream comparisons.
std::vector<std::string> Kinds(const std::vector<Token>& toks) {
  std::vector<std::string> out;
  for (const Token& t : toks) {
    std::string s = TokenKindName(t.kind);
    if (t.kind != K::kNewline && t.kind != K::kIndent && t.kind != K::kDedent &&
        t.kind != K::kEndMarker) {
      s += ":" + t.text;
    }
    out.push_back(s);
  }
  return out;
}

TEST(Tokenizer, SimpleStatementWithPositions) {
  auto t = Lex("x = foo(1, 'a')\n");
  EXPECT_EQ(Kinds(t),
            (std::vector<std::string>{"NAME:x", "OP:=", "NAME:foo", "OP:(", "NUMBER:1", "OP:,",
                                      "STRING:'a'", "OP:)", "NEWLINE", "ENDMARKER"}));
  EXPECT_EQ(t[2].line, 1);
  EXPECT_EQ(t[2].col, 5);
  EXPECT_EQ(t[6].col, 12);
  EXPECT_EQ(t[8].col, 16);  // NEWLINE sits on the line break
}

TEST(Tokenizer, IndentAndDedent) {
  auto t = Lex("class A:\n  def f(self):\n    return 1\n  x = 2\ny = 3\n");
  EXPECT_EQ(
      Kinds(t),
      (std::vector<std::string>{
          "NAME:class", "NAME:A",    "OP::",   "NEWLINE",  "INDENT",  "NAME:def", "NAME:f",
          "OP:(",       "NAME:self", "OP:)",   "OP::",     "NEWLINE", "INDENT",   "NAME:return",
          "NUMBER:1",   "NEWLINE",   "DEDENT", "NAME:x",   "OP:=",    "NUMBER:2", "NEWLINE",
          "DEDENT",     "NAME:y",    "OP:=",   "NUMBER:3", "NEWLINE", "ENDMARKER"}));
  EXPECT_EQ(t[16].line, 4);  // the DEDENT comes with the line that dedents
}

TEST(Tokenizer, DedentsAtEndOfFileWithoutTrailingNewline) {
  auto t = Lex("if a:\n    if b:\n        c");
  ASSERT_GE(t.size(), 4u);
  EXPECT_EQ(Kinds(t).back(), "ENDMARKER");
  EXPECT_EQ(t[t.size() - 2].kind, K::kDedent);
  EXPECT_EQ(t[t.size() - 3].kind, K::kDedent);
  EXPECT_EQ(t[t.size() - 4].kind, K::kNewline);
}

TEST(Tokenizer, NewlinesInsideBracketsAreNotStatementEnds) {
  auto t = Lex("f(a,\n  b,\n\n c)\nd\n");
  EXPECT_EQ(Kinds(t), (std::vector<std::string>{"NAME:f", "OP:(", "NAME:a", "OP:,", "NAME:b",
                                                "OP:,", "NAME:c", "OP:)", "NEWLINE", "NAME:d",
                                                "NEWLINE", "ENDMARKER"}));
  EXPECT_EQ(t[6].line, 4);
  EXPECT_EQ(t[9].line, 5);
}

TEST(Tokenizer, BackslashContinuationJoinsLines) {
  auto t = Lex("x = 1 + \\\n    2\ny\n");
  EXPECT_EQ(Kinds(t), (std::vector<std::string>{"NAME:x", "OP:=", "NUMBER:1", "OP:+", "NUMBER:2",
                                                "NEWLINE", "NAME:y", "NEWLINE", "ENDMARKER"}));
  EXPECT_EQ(t[4].line, 2);
  EXPECT_EQ(t[4].col, 5);
}

TEST(Tokenizer, CommentsAndBlankLinesMakeNoNewlineOrIndent) {
  auto t = Lex("# top\n\nif a:  # why\n\n        # deep comment\n    b\n");
  EXPECT_EQ(Kinds(t),
            (std::vector<std::string>{"COMMENT:# top", "NAME:if", "NAME:a", "OP::", "COMMENT:# why",
                                      "NEWLINE", "COMMENT:# deep comment", "INDENT", "NAME:b",
                                      "NEWLINE", "DEDENT", "ENDMARKER"}));
}

TEST(Tokenizer, AllStringPrefixesAreOneToken) {
  for (std::string p : {"", "r", "R", "b", "B", "u", "U", "f", "F", "rb", "Rb", "bR", "BR", "br",
                        "fr", "Fr", "rf", "RF"}) {
    for (std::string q : {"'", "\"", "'''", "\"\"\""}) {
      const std::string lit = p + q + "x" + q;
      auto t = Lex(lit + "\n");
      ASSERT_EQ(t.size(), 3u) << lit;
      EXPECT_EQ(t[0].kind, K::kString) << lit;
      EXPECT_EQ(t[0].text, lit);
    }
  }
  // Not prefixes: these are a name followed by a string.
  EXPECT_EQ(Kinds(Lex("bf'x'\n"))[0], "NAME:bf");
  EXPECT_EQ(Kinds(Lex("ur'x'\n"))[0], "NAME:ur");
  EXPECT_EQ(Kinds(Lex("rr'x'\n"))[0], "NAME:rr");
}

TEST(Tokenizer, StringsWithEscapedQuotesAndContinuations) {
  auto t = Lex(R"(a = 'it\'s' + "say \"hi\"" + r"\"")"
               "\n");
  EXPECT_EQ(t[2].text, R"('it\'s')");
  EXPECT_EQ(t[4].text, R"("say \"hi\"")");
  EXPECT_EQ(t[6].text, R"(r"\"")");
  auto u = Lex("s = 'one \\\ntwo'\nx\n");
  EXPECT_EQ(u[2].kind, K::kString);
  EXPECT_EQ(u[2].line, 1);
  EXPECT_EQ(u[2].end_line, 2);
  EXPECT_EQ(u[4].text, "x");
  EXPECT_EQ(u[4].line, 3);
}

TEST(Tokenizer, TripleQuotedStringSpansLines) {
  auto t = Lex("src = \"\"\"\nline 'one'\n\"\" still\n\"\"\"\nx = 1\n");
  EXPECT_EQ(t[2].kind, K::kString);
  EXPECT_EQ(t[2].line, 1);
  EXPECT_EQ(t[2].col, 7);
  EXPECT_EQ(t[2].end_line, 4);
  EXPECT_EQ(t[4].text, "x");
  EXPECT_EQ(t[4].line, 5);
}

TEST(Tokenizer, FStringPlaceholdersMayContainQuotes) {
  auto t = Lex("s = f\"{d[\"k\"]} and {x:{w}.{p}f} {{lit}}\"\ny\n");
  EXPECT_EQ(t[2].kind, K::kString);
  EXPECT_EQ(t[2].text, "f\"{d[\"k\"]} and {x:{w}.{p}f} {{lit}}\"");
  EXPECT_EQ(t[4].text, "y");
  auto u = Lex("s = f'{a!r:>10}' f'{\"}\"}'\n");
  EXPECT_EQ(u[2].text, "f'{a!r:>10}'");
  EXPECT_EQ(u[3].text, "f'{\"}\"}'");
}

TEST(Tokenizer, Numbers) {
  auto t = Lex("0x1F 0b1010 0o17 1_000 3.14 .5 1e-5 2.5E+3 1j 7.\n");
  EXPECT_EQ(Kinds(t),
            (std::vector<std::string>{"NUMBER:0x1F", "NUMBER:0b1010", "NUMBER:0o17", "NUMBER:1_000",
                                      "NUMBER:3.14", "NUMBER:.5", "NUMBER:1e-5", "NUMBER:2.5E+3",
                                      "NUMBER:1j", "NUMBER:7.", "NEWLINE", "ENDMARKER"}));
}

TEST(Tokenizer, LongestOperatorsWin) {
  auto t = Lex("a **= b // c -> d := e ... f != g @ h <<= i\n");
  std::vector<std::string> ops;
  for (const Token& k : t) {
    if (k.kind == K::kOp) ops.push_back(k.text);
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"**=", "//", "->", ":=", "...", "!=", "@", "<<="}));
}

TEST(Tokenizer, CrLfAndLoneCrEndLines) {
  auto t = Lex("a = 1\r\nif a:\r\n    b = '''x\r\ny'''\r\nc\r");
  EXPECT_EQ(Kinds(t), (std::vector<std::string>{"NAME:a", "OP:=", "NUMBER:1", "NEWLINE", "NAME:if",
                                                "NAME:a", "OP::", "NEWLINE", "INDENT", "NAME:b",
                                                "OP:=", "STRING:'''x\r\ny'''", "NEWLINE", "DEDENT",
                                                "NAME:c", "NEWLINE", "ENDMARKER"}));
  EXPECT_EQ(t[4].line, 2);
  EXPECT_EQ(t[11].line, 3);
  EXPECT_EQ(t[11].end_line, 4);
  EXPECT_EQ(t[14].line, 5);
  EXPECT_EQ(t[14].col, 1);
}

TEST(Tokenizer, TabsIndentToMultiplesOfEight) {
  auto t = Lex("if a:\n\tb\n\tif c:\n\t\td\n");
  EXPECT_EQ(Kinds(t),
            (std::vector<std::string>{"NAME:if", "NAME:a", "OP::", "NEWLINE", "INDENT", "NAME:b",
                                      "NEWLINE", "NAME:if", "NAME:c", "OP::", "NEWLINE", "INDENT",
                                      "NAME:d", "NEWLINE", "DEDENT", "DEDENT", "ENDMARKER"}));
}

TEST(Tokenizer, UnicodeInNamesStringsAndComments) {
  auto t = Lex("größe = 'π ≈ 3.14'  # café\n");
  EXPECT_EQ(Kinds(t), (std::vector<std::string>{"NAME:größe", "OP:=", "STRING:'π ≈ 3.14'",
                                                "COMMENT:# café", "NEWLINE", "ENDMARKER"}));
  EXPECT_EQ(t[1].col, 9);  // columns count bytes: "größe" is 7 bytes
}

TEST(Tokenizer, UnterminatedStringsAreLocated) {
  SyntaxError e = LexError("x = 1\ny = 'abc\nz = 2\n");
  EXPECT_EQ(e.message, "unterminated string literal");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.col, 5);
  e = LexError("a\nb = \"\"\"never\nclosed\n");
  EXPECT_EQ(e.message, "unterminated triple-quoted string literal (opened at line 2)");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.col, 5);
  e = LexError("s = 'abc");
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.col, 5);
  e = LexError("s = f'{x'\n");
  EXPECT_EQ(e.line, 1);
}

TEST(Tokenizer, BracketErrorsAreLocated) {
  SyntaxError e = LexError("f(a]\n");
  EXPECT_EQ(e.message, "closing parenthesis ']' does not match opening parenthesis '(' on line 1");
  EXPECT_EQ(e.col, 4);
  e = LexError("x = 1\ny = 2)\n");
  EXPECT_EQ(e.message, "unmatched ')'");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.col, 6);
  e = LexError("a = [1,\n 2,\n");
  EXPECT_EQ(e.message, "'[' was never closed");
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.col, 5);
  e = LexError(std::string(300, '(') + std::string(300, ')'));
  EXPECT_EQ(e.message, "too many nested parentheses");
  EXPECT_EQ(e.col, kMaxBracketDepth + 1);
}

TEST(Tokenizer, IndentationErrorsAreLocated) {
  SyntaxError e = LexError("if a:\n    b\n  c\n");
  EXPECT_EQ(e.message, "unindent does not match any outer indentation level");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.col, 3);
  e = LexError("if a:\n        b\n\tc\n");  // 8 spaces vs one tab: equal for 8, not for 1
  EXPECT_EQ(e.message, "inconsistent use of tabs and spaces in indentation");
  EXPECT_EQ(e.line, 3);
}

TEST(Tokenizer, InvalidCharactersAndContinuations) {
  SyntaxError e = LexError("a = $b\n");
  EXPECT_EQ(e.message, "invalid character '$' (U+0024)");
  EXPECT_EQ(e.col, 5);
  e = LexError(std::string("a = 1\n\x01", 7));
  EXPECT_EQ(e.message, "invalid non-printable character U+0001");
  EXPECT_EQ(e.line, 2);
  e = LexError("a = 1 \\ b\n");
  EXPECT_EQ(e.message, "unexpected character after line continuation character");
  e = LexError("a = \\");
  EXPECT_EQ(e.message, "unexpected end of file after line continuation character");
  e = LexError("a = b ! c\n");
  EXPECT_EQ(e.col, 7);
}

TEST(Tokenizer, EmptyAndWhitespaceOnlyInputs) {
  EXPECT_EQ(Kinds(Lex("")), (std::vector<std::string>{"ENDMARKER"}));
  EXPECT_EQ(Kinds(Lex("   \n\n\t\n")), (std::vector<std::string>{"ENDMARKER"}));
}

// Random bytes, biased towards the characters that drive the tokenizer's states, must always
// end in a result or a located error; never a crash or a hang (the suite's time limit).
TEST(Tokenizer, RandomBytesNeverCrash) {
  std::mt19937 rng(12345);
  std::string alphabet = "\"'\\\n\r\t ()[]{}#:fbrFBR=+.0x1e_ \xc3\xa9\x80\xff$!";
  alphabet.push_back('\0');
  int ok = 0, failed = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    std::string s(rng() % 200, ' ');
    for (char& c : s) {
      c = (rng() % 4 == 0) ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    }
    std::vector<Token> toks;
    SyntaxError err;
    if (Tokenize(s, &toks, &err)) {
      ++ok;
      ASSERT_FALSE(toks.empty());
      ASSERT_EQ(toks.back().kind, K::kEndMarker);
    } else {
      ++failed;
      ASSERT_GE(err.line, 1);
      ASSERT_GE(err.col, 1);
      ASSERT_FALSE(err.message.empty());
    }
    for (const Token& t : toks) {
      if (t.kind == K::kString) (void)DecodeStringLiteral(t.text);
    }
    (void)DecodeStringLiteral(s);
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(failed, 0);
}

}  // namespace
}  // namespace kf::extract
