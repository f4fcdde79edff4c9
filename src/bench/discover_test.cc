#include "bench/discover.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace kf::bench {
namespace {
namespace fs = std::filesystem;

void Touch(const fs::path& p, const std::string& text = "x\n") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(Discover, BothSampleLayoutsMatchByLevelNumberAndStem) {
  fs::path root = fs::temp_directory_path() / ("kf-discover-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const std::string model = "import torch\nclass Model(torch.nn.Module):\n  pass\n";
  Touch(root / "kb/level1/19_ReLU.py", model);
  Touch(root / "kb/level1/2_Matmul.py", model);
  Touch(root / "kb/level1/helper.py", "def f(): pass\n");  // no Model: not a problem
  Touch(root / "ours/level2/relu.py", model);

  Touch(root / "s/level_1_problem_19_sample_0_kernel.py");  // KernelBench's layout
  Touch(root / "s/level_1_problem_19_sample_1_kernel.py");
  Touch(root / "s/level_1_problem_7_sample_0_kernel.py");  // no problem 7
  Touch(root / "s/level1/2/sample_0.py");                  // by number
  Touch(root / "s/level1/2_Matmul/sample_1.md");           // by stem, a raw reply
  Touch(root / "s/level2/relu/sample_3.py");               // our own problems, by stem
  Touch(root / "s/level2/relu/notes.txt");                 // ignored

  auto problems = FindProblems({root / "kb/level1", root / "ours/level2"});
  ASSERT_TRUE(problems.ok()) << problems.status().message();
  ASSERT_EQ(problems->size(), 3u);
  EXPECT_EQ((*problems)[0].stem, "2_Matmul");  // numeric order
  EXPECT_EQ((*problems)[1].number, 19);
  EXPECT_EQ((*problems)[2].level, "level2");

  Discovery d = MatchSamples(*problems, root / "s");
  ASSERT_EQ(d.samples.size(), 5u);
  EXPECT_EQ(d.samples[0].problem, 0u);
  EXPECT_EQ(d.samples[0].index, 0);
  EXPECT_EQ(d.samples[1].problem, 0u);
  EXPECT_EQ(d.samples[1].index, 1);
  EXPECT_EQ(d.samples[2].problem, 1u);
  EXPECT_EQ(d.samples[3].problem, 1u);
  EXPECT_EQ(d.samples[4].problem, 2u);
  EXPECT_EQ(d.samples[4].index, 3);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("problem_7"), std::string::npos);
  fs::remove_all(root);
}

TEST(Discover, ExactLevelNameWinsOverTheLevelNumber) {
  fs::path root = fs::temp_directory_path() / ("kf-discover-v-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const std::string model = "import torch\nclass Model(torch.nn.Module):\n  pass\n";
  Touch(root / "p/v0-level1/19_ReLU.py", model);   // one problem in two versions
  Touch(root / "p/v01-level1/19_ReLU.py", model);
  Touch(root / "s/v01-level1/19_ReLU/sample_0.py");  // names its version's folder
  Touch(root / "s/level1/19_ReLU/sample_1.py");      // only the number: ambiguous

  auto problems = FindProblems({root / "p/v0-level1", root / "p/v01-level1"});
  ASSERT_TRUE(problems.ok()) << problems.status().message();
  Discovery d = MatchSamples(*problems, root / "s");
  ASSERT_EQ(d.samples.size(), 1u);
  EXPECT_EQ(d.problems[d.samples[0].problem].level, "v01-level1");
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("matches 2 problems"), std::string::npos);
  fs::remove_all(root);
}

TEST(Discover, MissingProblemFolderIsAnError) {
  EXPECT_FALSE(FindProblems({"/nonexistent/kforge/level9"}).ok());
}

}  // namespace
}  // namespace kf::bench
