#include "extract/python_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kf::extract {
namespace {

ParsedModule Parse(std::string_view src) {
  ParsedModule m;
  SyntaxError err;
  EXPECT_TRUE(ParseModule(src, &m, &err)) << err.message << " at " << err.line << ":" << err.col;
  return m;
}

std::string TokenText(const ParsedModule& m, int b, int e) {
  std::string s;
  for (int i = b; i < e; ++i) s += (i > b ? " " : "") + m.tokens[i].text;
  return s;
}

constexpr const char* kModule = R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline as li, load
from torch.utils import (cpp_extension as ce,
                         hipify)
from . import sibling

src = """
kernel
"""  # comment
n: int = 4
a = b = "x"
src += "more"
p, q = 1, 2
if True:
    flag = 1; other = 2
ext = li(name="e", cpp_sources=[src], functions=["f"], *extra, **kw)

@decorator
def helper(x, y=f(1)):
    local = 3
    return x

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    async def forward(self, x):
        return ext.f(x)
class Other: pass
)";

TEST(ParseModule, ClassesAndMethodsWithLineRanges) {
  ParsedModule m = Parse(kModule);
  ASSERT_EQ(m.classes.size(), 2u);
  EXPECT_EQ(m.classes[0].name, "ModelNew");
  EXPECT_EQ(m.classes[0].line, 24);
  EXPECT_EQ(m.classes[0].end_line, 29);
  ASSERT_EQ(m.classes[0].methods.size(), 2u);
  EXPECT_EQ(m.classes[0].methods[0].name, "__init__");
  EXPECT_EQ(m.classes[0].methods[0].line, 25);
  EXPECT_EQ(m.classes[0].methods[0].end_line, 26);
  EXPECT_EQ(m.classes[0].methods[1].name, "forward");
  EXPECT_EQ(m.classes[0].methods[1].line, 28);
  EXPECT_EQ(m.classes[0].methods[1].end_line, 29);
  EXPECT_EQ(m.classes[1].name, "Other");
  EXPECT_EQ(m.classes[1].line, 30);
  EXPECT_EQ(m.classes[1].end_line, 30);
}

TEST(ParseModule, FunctionsAtModuleLevel) {
  ParsedModule m = Parse(kModule);
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].name, "helper");
  EXPECT_EQ(m.functions[0].line, 20);
  EXPECT_EQ(m.functions[0].end_line, 22);
}

TEST(ParseModule, Assignments) {
  ParsedModule m = Parse(kModule);
  std::vector<std::string> seen;
  for (const Assignment& a : m.assignments) {
    std::string v = a.value_begin < 0 ? "?" : TokenText(m, a.value_begin, a.value_end);
    seen.push_back(a.name + "@" + std::to_string(a.line) + (a.augmented ? "+=" : "=") + v +
                   (a.scope == -1 ? "" : " (local)"));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "src@8=\"\"\"\nkernel\n\"\"\"",
                      "n@11=4",
                      "a@12=\"x\"",
                      "b@12=\"x\"",
                      "src@13+=\"more\"",
                      "p@14=?",
                      "q@14=?",
                      "flag@16=1",
                      "other@16=2",
                      "ext@17=li ( name = \"e\" , cpp_sources = [ src ] , functions = [ \"f\" ] , "
                      "* extra , ** kw )",
                      "local@21=3 (local)",
                  }));
}

TEST(ParseModule, Imports) {
  ParsedModule m = Parse(kModule);
  std::vector<std::string> seen;
  for (const Import& im : m.imports) {
    seen.push_back(im.module + "|" + im.name + "|" + im.alias + "@" + std::to_string(im.line));
  }
  EXPECT_EQ(seen,
            (std::vector<std::string>{
                "torch||torch@1", "torch.nn||nn@2", "torch.utils.cpp_extension|load_inline|li@3",
                "torch.utils.cpp_extension|load|load@3", "torch.utils|cpp_extension|ce@4",
                "torch.utils|hipify|hipify@4", ".|sibling|sibling@6"}));
}

TEST(ParseModule, CallsWithArguments) {
  ParsedModule m = Parse(kModule);
  std::vector<std::string> callees;
  for (const Call& c : m.calls) callees.push_back(c.callee + "@" + std::to_string(c.line));
  // `@decorator` has no parentheses and `def helper(` is a definition: neither is a call.
  EXPECT_EQ(callees, (std::vector<std::string>{"li@17", "f@20", "super@26", "ext.f@29"}));
  const Call& li = m.calls[0];
  ASSERT_EQ(li.args.size(), 5u);
  EXPECT_EQ(li.args[0].keyword, "name");
  EXPECT_EQ(TokenText(m, li.args[0].begin, li.args[0].end), "\"e\"");
  EXPECT_EQ(li.args[1].keyword, "cpp_sources");
  EXPECT_EQ(TokenText(m, li.args[1].begin, li.args[1].end), "[ src ]");
  EXPECT_EQ(li.args[3].star, 1);
  EXPECT_EQ(TokenText(m, li.args[3].begin, li.args[3].end), "extra");
  EXPECT_EQ(li.args[4].star, 2);
  EXPECT_EQ(m.tokens[li.rparen].text, ")");
  EXPECT_EQ(m.partner[li.rparen], li.lparen);
  EXPECT_EQ(m.calls[1].scope, -1);  // a default argument is evaluated at module level
  EXPECT_EQ(m.calls[3].scope, m.classes[0].methods[1].stmt);
}

TEST(ParseModule, PositionalArgumentsAndTrailingComma) {
  ParsedModule m = Parse("f(a, (b, c), [d, e], k=g(h, i),)\n");
  ASSERT_EQ(m.calls.size(), 2u);
  const Call& f = m.calls[0];
  ASSERT_EQ(f.args.size(), 4u);
  EXPECT_EQ(TokenText(m, f.args[1].begin, f.args[1].end), "( b , c )");
  EXPECT_EQ(TokenText(m, f.args[2].begin, f.args[2].end), "[ d , e ]");
  EXPECT_EQ(f.args[3].keyword, "k");
  EXPECT_EQ(m.calls[1].callee, "g");
}

TEST(ParseModule, CommentsAreKeptApart) {
  ParsedModule m = Parse("x = 1  # one\n# two\n");
  ASSERT_EQ(m.comments.size(), 2u);
  EXPECT_EQ(m.comments[1].text, "# two");
  EXPECT_EQ(m.comments[1].line, 2);
  for (const Token& t : m.tokens) EXPECT_NE(t.kind, TokenKind::kComment);
}

TEST(ParseModule, StatementsSplitOnSemicolonsAndKnowTheirBlock) {
  ParsedModule m = Parse("if a:\n    b = 1; c = 2\nd = 3\n");
  ASSERT_EQ(m.statements.size(), 4u);
  EXPECT_TRUE(m.statements[0].is_header);
  EXPECT_EQ(m.statements[0].end_line, 2);
  EXPECT_EQ(m.statements[1].parent, 0);
  EXPECT_EQ(m.statements[2].parent, 0);
  EXPECT_EQ(TokenText(m, m.statements[2].begin, m.statements[2].end), "c = 2");
  EXPECT_EQ(m.statements[3].parent, -1);
}

TEST(ParseModule, NestedClassIsNotModuleLevel) {
  ParsedModule m = Parse("def make():\n    class ModelNew:\n        pass\n    return ModelNew\n");
  EXPECT_TRUE(m.classes.empty());
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].end_line, 4);
}

TEST(ParseModule, UnexpectedIndentIsAnError) {
  ParsedModule m;
  SyntaxError err;
  EXPECT_FALSE(ParseModule("x = 1\n    y = 2\n", &m, &err));
  EXPECT_EQ(err.message, "unexpected indent");
  EXPECT_EQ(err.line, 2);
  EXPECT_EQ(err.col, 5);
}

TEST(ParseModule, MissingBlockIsAnError) {
  ParsedModule m;
  SyntaxError err;
  EXPECT_FALSE(ParseModule("def f():\nx = 1\n", &m, &err));
  EXPECT_EQ(err.message, "expected an indented block after 'def' on line 1");
  EXPECT_EQ(err.line, 2);
  EXPECT_FALSE(ParseModule("class A:\n", &m, &err));
  EXPECT_EQ(err.message, "expected an indented block after 'class' on line 1");
}

TEST(ParseModule, TokenizerErrorsPassThrough) {
  ParsedModule m;
  SyntaxError err;
  EXPECT_FALSE(ParseModule("x = (1,\n", &m, &err));
  EXPECT_EQ(err.message, "'(' was never closed");
  EXPECT_EQ(err.line, 1);
}

TEST(ParseModule, KeywordsAreNotCallees) {
  ParsedModule m = Parse("if (a):\n    assert (b)\nx = not (c) or print(d)\n");
  ASSERT_EQ(m.calls.size(), 1u);
  EXPECT_EQ(m.calls[0].callee, "print");
  EXPECT_TRUE(IsPythonKeyword("lambda"));
  EXPECT_FALSE(IsPythonKeyword("print"));
}

TEST(ParseModule, MethodCallOnExpressionIsNotADottedCallee) {
  ParsedModule m = Parse("y = f(x).g(z)\n");
  ASSERT_EQ(m.calls.size(), 1u);
  EXPECT_EQ(m.calls[0].callee, "f");
}

}  // namespace
}  // namespace kf::extract
