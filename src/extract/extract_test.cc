#include "extract/extract.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace kf::extract {
namespace {

// A well-formed candidate; line numbers matter to the tests below.
constexpr const char* kGood = R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = """
#include <torch/extension.h>
__global__ void k() {}
"""

cpp_src = "torch::Tensor f(torch::Tensor x);"

ext = load_inline(
    name="my_ext",
    cpp_sources=cpp_src,
    cuda_sources=[cuda_src],
    functions=["f"],
    extra_cuda_cflags=["-O3", "--use_fast_math"],
    with_cuda=True,
    verbose=True,
)

class ModelNew(nn.Module):
    def forward(self, x):
        return ext.f(x)
)";

// By value: callers pass temporaries.
InlineCall OnlyCall(const Candidate& c) {
  EXPECT_EQ(c.inline_calls.size(), 1u);
  return c.inline_calls.empty() ? InlineCall{} : c.inline_calls[0];
}

std::vector<std::string> Codes(const Candidate& c) {
  std::vector<std::string> out;
  for (const Diagnostic& d : c.diagnostics) out.push_back(d.code);
  return out;
}

TEST(Extract, WholeFileResolvesWithLineMaps) {
  Candidate c = Extract(kGood);
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c.diagnostics.empty());
  EXPECT_FALSE(c.from_reply);
  EXPECT_EQ(c.first_line, 1);
  EXPECT_EQ(c.code, kGood);
  EXPECT_TRUE(c.has_model_new);
  EXPECT_EQ(c.model_new_line, 22);
  const InlineCall call = OnlyCall(c);
  EXPECT_EQ(call.line, 12);
  ASSERT_TRUE(call.resolved) << call.unresolved_why;
  EXPECT_EQ(call.spec.name, "my_ext");
  EXPECT_EQ(call.spec.cpp_sources, (std::vector<std::string>{"torch::Tensor f(torch::Tensor x);"}));
  ASSERT_EQ(call.spec.cuda_sources.size(), 1u);
  EXPECT_EQ(call.spec.cuda_sources[0], "\n#include <torch/extension.h>\n__global__ void k() {}\n");
  EXPECT_EQ(call.spec.functions, nlohmann::json::array({"f"}));
  EXPECT_EQ(call.spec.extra_cuda_cflags, (std::vector<std::string>{"-O3", "--use_fast_math"}));
  EXPECT_EQ(call.spec.with_cuda, std::optional<bool>(true));
  EXPECT_TRUE(call.spec.with_pytorch_error_handling);
  // The triple-quoted literal opens on line 5: its first (empty) text line is line 5.
  ASSERT_EQ(call.cuda_sources.size(), 1u);
  EXPECT_EQ(call.cuda_sources[0].text, call.spec.cuda_sources[0]);
  EXPECT_EQ(call.cuda_sources[0].line_map, (std::vector<int>{5, 6, 7}));
  ASSERT_EQ(call.cpp_sources.size(), 1u);
  EXPECT_EQ(call.cpp_sources[0].line_map, (std::vector<int>{10}));
}

TEST(Extract, ReplyWithProseUsesFencedBlockAndSubmittedLines) {
  const std::string reply =
      std::string("Here is my kernel.\n\nIt's fast!\n```python\n") + kGood + "```\nThat's all.\n";
  Candidate c = Extract(reply);
  EXPECT_TRUE(c.ok()) << (c.diagnostics.empty() ? "" : c.diagnostics[0].message);
  EXPECT_TRUE(c.from_reply);
  EXPECT_EQ(c.first_line, 5);
  EXPECT_EQ(c.code, kGood);
  EXPECT_EQ(c.model_new_line, 26);
  const InlineCall call = OnlyCall(c);
  EXPECT_EQ(call.line, 16);
  ASSERT_EQ(call.cuda_sources.size(), 1u);
  EXPECT_EQ(call.cuda_sources[0].line_map, (std::vector<int>{9, 10, 11}));
}

TEST(Extract, ResolvesConcatenationNamesAndReassignment) {
  const char* code =
      "from torch.utils import cpp_extension\n"                           // 1
      "head = '#include <a>\\n'\n"                                        // 2
      "body = (\"int x;\\n\"\n"                                           // 3
      "        \"int y;\\n\")\n"                                          // 4
      "src = head + body\n"                                               // 5
      "src += 'int z;'\n"                                                 // 6
      "flags = ['-O2'] + ['-g']\n"                                        // 7
      "name = 'first'\n"                                                  // 8
      "name = 'second'\n"                                                 // 9
      "m = cpp_extension.load_inline(name, [src], extra_cflags=flags)\n"  // 10
      "name = 'third'\n"                                                  // 11
      "class ModelNew: pass\n";
  Candidate c = Extract(code);
  EXPECT_TRUE(c.ok());
  const InlineCall call = OnlyCall(c);
  ASSERT_TRUE(call.resolved) << call.unresolved_why;
  EXPECT_EQ(call.spec.name, "second");  // the last binding before the call
  EXPECT_EQ(call.spec.cpp_sources[0], "#include <a>\nint x;\nint y;\nint z;");
  EXPECT_EQ(call.cpp_sources[0].line_map, (std::vector<int>{2, 3, 4, 6}));
  EXPECT_EQ(call.spec.extra_cflags, (std::vector<std::string>{"-O2", "-g"}));
  EXPECT_TRUE(call.spec.cuda_sources.empty());
  EXPECT_TRUE(call.spec.functions.is_null());
  EXPECT_FALSE(call.spec.with_cuda.has_value());
}

TEST(Extract, JoinAndDictFunctionsAndTuple) {
  const char* code =
      "import torch.utils.cpp_extension as ce\n"
      "lines = ['int a;', 'int b;']\n"
      "src = '\\n'.join(lines)\n"
      "ext = ce.load_inline(name='j', cpp_sources=(src,), functions={'f': 'doc', 'g': ''},\n"
      "                     with_pytorch_error_handling=False, extra_ldflags=None)\n"
      "class ModelNew: pass\n";
  const InlineCall call = OnlyCall(Extract(code));
  ASSERT_TRUE(call.resolved) << call.unresolved_why;
  EXPECT_EQ(call.spec.cpp_sources[0], "int a;\nint b;");
  EXPECT_EQ(call.cpp_sources[0].line_map, (std::vector<int>{2, 2}));
  EXPECT_EQ(call.spec.functions, (nlohmann::json{{"f", "doc"}, {"g", ""}}));
  EXPECT_FALSE(call.spec.with_pytorch_error_handling);
  EXPECT_TRUE(call.spec.extra_ldflags.empty());
}

TEST(Extract, FindsEveryWayOfNamingLoadInline) {
  const char* code =
      "import torch\n"
      "from torch.utils.cpp_extension import load_inline as li\n"
      "from torch.utils import cpp_extension as cx\n"
      "build = torch.utils.cpp_extension.load_inline\n"
      "a = li(name='a', cpp_sources='')\n"
      "b = cx.load_inline(name='b', cpp_sources='')\n"
      "c = torch.utils.cpp_extension.load_inline(name='c', cpp_sources='')\n"
      "d = build(name='d', cpp_sources='')\n"
      "e = load_inline(name='e', cpp_sources='')\n"
      "f = torch.utils.cpp_extension.load(name='f', sources=[])\n"
      "class ModelNew: pass\n";
  Candidate c = Extract(code);
  ASSERT_EQ(c.inline_calls.size(), 5u);
  std::string names;
  for (const InlineCall& call : c.inline_calls) {
    EXPECT_TRUE(call.resolved) << call.unresolved_why;
    names += call.spec.name + std::to_string(call.line);
  }
  EXPECT_EQ(names, "a5b6c7d8e9");
}

TEST(Extract, CallInsideAFunctionSeesLocalsThenModuleNames) {
  const char* code =
      "from torch.utils.cpp_extension import load_inline\n"
      "def build():\n"
      "    local_src = 'int local;'\n"
      "    return load_inline(name=NAME, cpp_sources=[local_src, late_src])\n"
      "NAME = 'n'\n"
      "late_src = 'int late;'\n"
      "mod = build()\n"
      "class ModelNew: pass\n";
  const InlineCall call = OnlyCall(Extract(code));
  ASSERT_TRUE(call.resolved) << call.unresolved_why;
  EXPECT_EQ(call.spec.name, "n");
  EXPECT_EQ(call.spec.cpp_sources, (std::vector<std::string>{"int local;", "int late;"}));
  EXPECT_EQ(call.cpp_sources[1].line_map, (std::vector<int>{6}));
}

// Each case: an argument expression we must not guess, and words the reason must contain.
TEST(Extract, UnresolvableArgumentsAreNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cpp_sources=f'int {n};'", "'cpp_sources': cannot resolve an f-string with placeholders"},
      {"cpp_sources=open('k.cpp').read()", "'cpp_sources': cannot resolve a call to open()"},
      {"cpp_sources=os.path.join('a', 'b')", "a call to os.path.join()"},
      {"cpp_sources='%s' % x", "%-formatting"},
      {"cpp_sources='{}'.format(x)", "a call to .format()"},
      {"cpp_sources=cfg.src", "attribute access '.src'"},
      {"cpp_sources=undefined_name", "name 'undefined_name', which is not assigned before line 3"},
      {"cpp_sources=[s for s in x]", "a comprehension"},
      {"cpp_sources=unpacked", "bound by an unpacking assignment at line 2"},
      {"cpp_sources='', **kw", "**-unpacked arguments"},
      {"cpp_sources='', bogus=1", "unexpected keyword argument 'bogus'"},
      {"cpp_sources=1", "the expression `1`"},
      {"cpp_sources={'a': 'b'}", "argument 'cpp_sources' must be a str or list of str, not a dict"},
      {"cpp_sources='', is_python_module=False", "is_python_module"},
  };
  for (const auto& [arg, why] : cases) {
    const std::string code = "import os\nunpacked, other = 1, 2\nm = load_inline(name='x', " + arg +
                             ")\nclass ModelNew: pass\n";
    Candidate c = Extract(code);
    const InlineCall call = OnlyCall(c);
    EXPECT_FALSE(call.resolved) << arg;
    EXPECT_NE(call.unresolved_why.find(why), std::string::npos)
        << arg << " gave: " << call.unresolved_why;
    EXPECT_EQ(call.line, 3);
    // Unresolved is not a format error: the run-time fallback takes over.
    EXPECT_TRUE(c.ok()) << arg;
    EXPECT_EQ(Codes(c), (std::vector<std::string>{"unresolved_load_inline"})) << arg;
  }
}

TEST(Extract, MissingRequiredArguments) {
  const InlineCall a = OnlyCall(Extract("x = load_inline(cpp_sources='')\nclass ModelNew: pass\n"));
  EXPECT_EQ(a.unresolved_why, "missing required argument 'name'");
  const InlineCall b = OnlyCall(Extract("x = load_inline('n')\nclass ModelNew: pass\n"));
  EXPECT_EQ(b.unresolved_why, "missing required argument 'cpp_sources'");
  const InlineCall d =
      OnlyCall(Extract("x = load_inline('n', '', name='m')\nclass ModelNew: pass\n"));
  EXPECT_EQ(d.unresolved_why, "multiple values for argument 'name'");
}

TEST(Extract, SyntaxErrorIsLocatedInSubmittedText) {
  const std::string reply = "Sure.\n```py\nimport torch\nx = 'oops\nclass ModelNew: pass\n```\n";
  Candidate c = Extract(reply);
  EXPECT_FALSE(c.ok());
  ASSERT_EQ(c.diagnostics.size(), 1u);
  const Diagnostic& d = c.diagnostics[0];
  EXPECT_EQ(d.stage, "extract");
  EXPECT_EQ(d.code, "syntax_error");
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(d.message, "unterminated string literal");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.col, 5);
  EXPECT_EQ(d.excerpt, "x = 'oops");
  EXPECT_NE(d.hint.find("line 4"), std::string::npos);
  EXPECT_NE(d.hint.find("class ModelNew"), std::string::npos);
}

TEST(Extract, IndentationAndBracketErrors) {
  Candidate c = Extract("import torch\nif True:\n        a = 1\n    b = 2\n");
  ASSERT_EQ(Codes(c), (std::vector<std::string>{"syntax_error"}));
  EXPECT_EQ(c.diagnostics[0].line, 4);
  EXPECT_EQ(c.diagnostics[0].excerpt, "    b = 2");
  c = Extract("import torch\nx = load_inline(name='a',\n  cpp_sources=['x']\n");
  ASSERT_EQ(Codes(c), (std::vector<std::string>{"syntax_error"}));
  EXPECT_EQ(c.diagnostics[0].message, "'(' was never closed");
  EXPECT_EQ(c.diagnostics[0].line, 2);
  EXPECT_EQ(c.diagnostics[0].col, 16);
}

TEST(Extract, NoModelNewAndNoKernel) {
  Candidate c = Extract("import torch\nclass Model:\n    pass\n");
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(Codes(c), (std::vector<std::string>{"no_model_new", "no_kernel"}));
  EXPECT_EQ(c.diagnostics[0].line, 0);
  EXPECT_NE(c.diagnostics[1].message.find("torch.utils.cpp_extension.load_inline"),
            std::string::npos);
  EXPECT_FALSE(c.diagnostics[1].hint.empty());
  // load_inline mentioned only in a string or comment is not a call.
  c = Extract(
      "import torch\n# load_inline(name='x')\ns = 'load_inline(1)'\nclass ModelNew: pass\n");
  EXPECT_EQ(Codes(c), (std::vector<std::string>{"no_kernel"}));
}

// METR's KernelBench solutions define `class Model` with their kernels and end with
// `ModelNew = Model`: the candidate host instantiates ModelNew, so that is a ModelNew.
TEST(Extract, ModelNewBoundToAClass) {
  const std::string kernel =
      "import torch\nfrom torch.utils.cpp_extension import load_inline\n"
      "ext = load_inline(name='e', cpp_sources='int f();', functions=['f'])\n"
      "class Model:\n    def forward(self, x):\n        return ext.f(x)\n";
  Candidate c = Extract(kernel + "ModelNew = Model\n");
  EXPECT_TRUE(c.ok()) << Codes(c)[0];
  EXPECT_TRUE(c.has_model_new);
  EXPECT_EQ(c.model_new_class, "Model");
  EXPECT_EQ(c.model_new_line, 7);
  // Bound to something that is not a module-level class, rebound, or nested: not followed.
  for (const std::string tail :
       {"ModelNew = make_model()\n", "ModelNew = Other\n", "ModelNew = Model\nModelNew = 3\n",
        "if True:\n    ModelNew = Model\n"}) {
    c = Extract(kernel + tail);
    EXPECT_FALSE(c.has_model_new) << tail;
    EXPECT_EQ(Codes(c), (std::vector<std::string>{"no_model_new"})) << tail;
  }
}

TEST(Extract, NestedModelNewIsReportedAtItsLine) {
  Candidate c = Extract("import torch\nif True:\n    class ModelNew:\n        pass\n");
  EXPECT_FALSE(c.has_model_new);
  ASSERT_EQ(Codes(c), (std::vector<std::string>{"no_model_new", "no_kernel"}));
  EXPECT_EQ(c.diagnostics[0].line, 3);
  EXPECT_EQ(c.diagnostics[0].excerpt, "    class ModelNew:");
}

TEST(Extract, ProseWithoutCodeIsNoCodeBlock) {
  Candidate c = Extract("I'm sorry, I can't write this kernel.\nMaybe try again later.\n");
  ASSERT_EQ(Codes(c), (std::vector<std::string>{"no_code_block"}));
  EXPECT_EQ(c.diagnostics[0].line, 1);
  EXPECT_EQ(c.diagnostics[0].excerpt, "I'm sorry, I can't write this kernel.");
  EXPECT_NE(c.diagnostics[0].hint.find("Return one Python file defining class ModelNew"),
            std::string::npos);
  EXPECT_TRUE(c.code.empty());
}

TEST(Extract, CrLfLineEndings) {
  std::string crlf;
  for (char ch : std::string(kGood)) {
    if (ch == '\n') crlf += '\r';
    crlf += ch;
  }
  Candidate c = Extract("Answer:\r\n```python\r\n" + crlf + "```\r\n");
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.first_line, 3);
  EXPECT_EQ(c.model_new_line, 24);
  const InlineCall call = OnlyCall(c);
  ASSERT_TRUE(call.resolved);
  // Python reads CRLF as '\n' in string values too.
  EXPECT_EQ(call.spec.cuda_sources[0], "\n#include <torch/extension.h>\n__global__ void k() {}\n");
  EXPECT_EQ(call.cuda_sources[0].line_map, (std::vector<int>{7, 8, 9}));
}

TEST(Extract, TabsAndUnicode) {
  const char* code =
      "from torch.utils.cpp_extension import load_inline\n"
      "# Ünïcödé comment: π ≈ 3.14\n"
      "src = '''// 日本語\n"
      "int x;'''\n"
      "class ModelNew:\n"
      "\tdef forward(self, x):\n"
      "\t\treturn load_inline(name='ü', cpp_sources=src)\n";
  Candidate c = Extract(code);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.model_new_line, 5);
  const InlineCall call = OnlyCall(c);
  ASSERT_TRUE(call.resolved) << call.unresolved_why;
  EXPECT_EQ(call.line, 7);
  EXPECT_EQ(call.spec.name, "ü");
  EXPECT_EQ(call.spec.cpp_sources[0], "// 日本語\nint x;");
  EXPECT_EQ(call.cpp_sources[0].line_map, (std::vector<int>{3, 4}));
}

TEST(Extract, LargeInput) {
  std::string code = "from torch.utils.cpp_extension import load_inline\nsrc = '''\n";
  int lines = 2;
  while (code.size() < 200 * 1024) {
    code += "float v" + std::to_string(lines) + " = 1.0f; // filler filler filler filler\n";
    ++lines;
  }
  code += "'''\next = load_inline(name='big', cpp_sources=src)\nclass ModelNew: pass\n";
  Candidate c = Extract(code);
  EXPECT_TRUE(c.ok());
  const InlineCall call = OnlyCall(c);
  ASSERT_TRUE(call.resolved);
  EXPECT_EQ(call.line, lines + 2);
  // Text lines: the empty one after the opening quotes (line 2), then fillers on 3..lines.
  ASSERT_EQ(call.cpp_sources[0].line_map.size(), static_cast<size_t>(lines - 1));
  EXPECT_EQ(call.cpp_sources[0].line_map.front(), 2);
  EXPECT_EQ(call.cpp_sources[0].line_map[1], 3);
  EXPECT_EQ(call.cpp_sources[0].line_map.back(), lines);
}

TEST(Extract, DoublingStringsIsRefusedQuickly) {
  std::string code = "a = 'xxxxxxxxxxxxxxxx'\n";
  for (int i = 0; i < 40; ++i) code += "a = a + a\n";
  code += "m = load_inline(name='d', cpp_sources=a)\nclass ModelNew: pass\n";
  const InlineCall call = OnlyCall(Extract(code));
  EXPECT_FALSE(call.resolved);
  EXPECT_NE(call.unresolved_why.find("16 MiB"), std::string::npos) << call.unresolved_why;
}

TEST(Extract, LongAugmentedChains) {
  std::string code = "x = ''\n";
  for (int i = 0; i < 100; ++i) code += "x += 'b'\n";
  code += "m = load_inline(name='ok', cpp_sources=x)\n";  // line 102
  // Past the depth limit every call fails, each without re-walking the chain.
  for (int i = 0; i < 1000; ++i) code += "x += 'b'\n";
  for (int i = 0; i < 1000; ++i) code += "m = load_inline(name=x, cpp_sources='')\n";
  code += "class ModelNew: pass\n";
  Candidate c = Extract(code);
  ASSERT_EQ(c.inline_calls.size(), 1001u);
  ASSERT_TRUE(c.inline_calls[0].resolved) << c.inline_calls[0].unresolved_why;
  EXPECT_EQ(c.inline_calls[0].spec.cpp_sources[0], std::string(100, 'b'));
  EXPECT_EQ(c.inline_calls[0].cpp_sources[0].line_map, (std::vector<int>{2}));
  EXPECT_EQ(c.inline_calls[0].line, 102);
  EXPECT_FALSE(c.inline_calls[1000].resolved);
  EXPECT_EQ(c.inline_calls[1000].unresolved_why,
            "argument 'name': cannot resolve names bound through too many assignments");
}

TEST(Extract, RandomBytesNeverCrash) {
  std::mt19937 rng(777);
  const std::string pieces[] = {"load_inline(",
                                "name=",
                                "'a'",
                                "\"\"\"",
                                "class ModelNew:",
                                "\n",
                                "    ",
                                "```",
                                "(",
                                ")",
                                "[",
                                "]",
                                ",",
                                "+",
                                "x",
                                "=",
                                "\\",
                                "#",
                                "f'{",
                                "}",
                                "\r\n",
                                "\t",
                                "\xff",
                                "import torch\n"};
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s;
    const int n = static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) s += pieces[rng() % std::size(pieces)];
    Candidate c = Extract(s);
    for (const Diagnostic& d : c.diagnostics) {
      ASSERT_EQ(d.stage, "extract");
      ASSERT_FALSE(d.message.empty());
    }
    ASSERT_EQ(c.ok(),
              Codes(c).empty() || Codes(c) == std::vector<std::string>(c.diagnostics.size(),
                                                                       "unresolved_load_inline"));
  }
}

}  // namespace
}  // namespace kf::extract
