#include "extract/fence.h"

#include <gtest/gtest.h>

#include <string>

#include "extract/extract.h"

namespace kf::extract {
namespace {

TEST(FirstFencedBlock, NoFenceMeansNoBlock) {
  std::string body = "untouched";
  int line = -1;
  EXPECT_FALSE(FirstFencedBlock("import torch\nx = 1\n", &body, &line));
  EXPECT_EQ(body, "untouched");
  EXPECT_EQ(line, -1);
  // Inline backticks and two-character runs are not fences.
  EXPECT_FALSE(FirstFencedBlock("use `x` here\n``not a fence``\n", &body, &line));
}

TEST(FirstFencedBlock, FirstBlockWithItsBodyLine) {
  std::string body;
  int line = 0;
  ASSERT_TRUE(FirstFencedBlock("Intro\n\n```python\na = 1\nb = 2\n```\ntext\n", &body, &line));
  EXPECT_EQ(body, "a = 1\nb = 2\n");
  EXPECT_EQ(line, 4);
}

TEST(FirstFencedBlock, PrefersTheBlockDefiningModelNew) {
  const char* reply =
      "Install:\n```bash\npip install torch\n```\n"  // lines 1-4
      "Code:\n~~~~ py\nclass ModelNew(nn.Module):\n    pass\n~~~~\n";
  std::string body;
  int line = 0;
  ASSERT_TRUE(FirstFencedBlock(reply, &body, &line));
  EXPECT_EQ(body, "class ModelNew(nn.Module):\n    pass\n");
  EXPECT_EQ(line, 7);
  // Without ModelNew anywhere, the first block wins.
  ASSERT_TRUE(FirstFencedBlock("```\nA\n```\n```\nB\n```\n", &body, &line));
  EXPECT_EQ(body, "A\n");
  EXPECT_EQ(line, 2);
}

TEST(FirstFencedBlock, ClosingFenceRules) {
  std::string body;
  int line = 0;
  // A shorter run or the other character does not close; an indented (<= 3 spaces) one does.
  ASSERT_TRUE(FirstFencedBlock("````\n```\n~~~~\nx\n   ````  \nafter\n", &body, &line));
  EXPECT_EQ(body, "```\n~~~~\nx\n");
  // A fence followed by text is not a closing fence.
  ASSERT_TRUE(FirstFencedBlock("```\nx\n```python\ny\n```\n", &body, &line));
  EXPECT_EQ(body, "x\n```python\ny\n");
}

TEST(FirstFencedBlock, UnclosedBlockRunsToTheEnd) {
  std::string body;
  int line = 0;
  ASSERT_TRUE(FirstFencedBlock("Here:\n```python\nclass ModelNew: pass", &body, &line));
  EXPECT_EQ(body, "class ModelNew: pass");
  EXPECT_EQ(line, 3);
  ASSERT_TRUE(FirstFencedBlock("```", &body, &line));
  EXPECT_EQ(body, "");
  EXPECT_EQ(line, 2);
}

TEST(FirstFencedBlock, CrLfReply) {
  std::string body;
  int line = 0;
  ASSERT_TRUE(FirstFencedBlock("Hi\r\n```python\r\nx = 1\r\n```\r\n", &body, &line));
  EXPECT_EQ(body, "x = 1\r\n");
  EXPECT_EQ(line, 3);
}

TEST(LooksLikePython, CodeLinesAndProse) {
  EXPECT_TRUE(LooksLikePython("import torch"));
  EXPECT_TRUE(LooksLikePython("Some words\n  from a import b\n"));
  EXPECT_TRUE(LooksLikePython("def f(): pass"));
  EXPECT_TRUE(LooksLikePython("@decorator"));
  EXPECT_TRUE(LooksLikePython("x = 1"));
  EXPECT_TRUE(LooksLikePython("self.y=2"));
  EXPECT_FALSE(LooksLikePython("a == b"));
  EXPECT_FALSE(LooksLikePython("I cannot do that.\nSorry!"));
  EXPECT_FALSE(LooksLikePython("1 = 2"));
  EXPECT_FALSE(LooksLikePython(""));
}

}  // namespace
}  // namespace kf::extract
