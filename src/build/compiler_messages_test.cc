#include <gtest/gtest.h>

#include "build/build.h"

namespace kf::build {
namespace {

TEST(ParseCompilerOutput, GccErrorsWarningsAndNotes) {
  auto m = ParseCompilerOutput(
      "FAILED: main.o\n"
      "/root/.cache/kforge/artifacts/ab.tmp/main.cpp:14:12: error: 'y' was not declared in this scope\n"
      "   14 |     return y;\n"
      "/root/x/main.cpp:3:1: warning: unused variable 'z' [-Wunused-variable]\n"
      "/usr/include/c++/12/bits/vector.h:10:2: note: candidate: foo\n");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].file, "main.cpp");
  EXPECT_EQ(m[0].line, 14);
  EXPECT_EQ(m[0].col, 12);
  EXPECT_EQ(m[0].severity, "error");
  EXPECT_EQ(m[0].text, "'y' was not declared in this scope");
  EXPECT_FALSE(m[0].cuda);
  EXPECT_EQ(m[1].severity, "warning");
  EXPECT_EQ(m[2].file, "vector.h");
}

TEST(ParseCompilerOutput, NvccAndLinker) {
  auto m = ParseCompilerOutput(
      "/tmp/b/cuda.cu(27): error: identifier \"blockIdxx\" is undefined\n"
      "/tmp/b/cuda.cu(30): error #20-D: identifier \"q\" is undefined\n"
      "ImportError: /tmp/b/ext.so: undefined symbol: _Z3foov\n");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].file, "cuda.cu");
  EXPECT_EQ(m[0].line, 27);
  EXPECT_TRUE(m[0].cuda);
  EXPECT_EQ(m[0].text, "identifier \"blockIdxx\" is undefined");
  EXPECT_EQ(m[1].line, 30);
  EXPECT_EQ(m[1].text, "identifier \"q\" is undefined");
  EXPECT_EQ(m[2].file, "");
  EXPECT_NE(m[2].text.find("undefined symbol"), std::string::npos);
}

TEST(LocateMessages, MapsGeneratedLinesToSourceStrings) {
  ExtensionSpec spec;
  spec.cpp_sources = {"int a;\nint b;\n", "int c;\nint d;\nint e;"};
  spec.cuda_sources = {"__global__ void k() {}\nbad line\n"};
  // main.cpp: line 1 is torch's include, source 0 starts at 2, source 1 at 4.
  nlohmann::json layout = {{"main.cpp", {2, 4}}, {"cuda.cu", {4}}};
  std::vector<CompilerMessage> m(4);
  m[0].file = "main.cpp"; m[0].line = 3;
  m[1].file = "main.cpp"; m[1].line = 6;
  m[2].file = "cuda.cu";  m[2].line = 5; m[2].cuda = true;
  m[3].file = "main.cpp"; m[3].line = 1;  // torch's own include: not the candidate's
  LocateMessages(layout, spec, &m);
  EXPECT_EQ(m[0].source_index, 0);
  EXPECT_EQ(m[0].source_line, 2);
  EXPECT_EQ(m[1].source_index, 1);
  EXPECT_EQ(m[1].source_line, 3);
  EXPECT_EQ(m[2].source_index, 0);
  EXPECT_EQ(m[2].source_line, 2);
  EXPECT_EQ(m[3].source_index, -1);
}

}  // namespace
}  // namespace kf::build
