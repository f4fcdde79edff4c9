#include "problems/registry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

namespace kf::problems {
namespace {
namespace fs = std::filesystem;

const char kProblem[] =
    "import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
    "        return x\n\ndef get_inputs():\n    return [torch.ones(2)]\n";
const char kCandidate[] = "class ModelNew(torch.nn.Module):\n    pass\n";

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("kf-registry-" + std::to_string(std::random_device{}()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "problems" / "level1");
    fs::create_directories(root_ / "elsewhere");
    Write("problems/level1/relu.py", kProblem);
    Write("problems/level1/relu_new.py", kCandidate);  // a candidate, not a problem
    Write("problems/level1/notes.txt", kProblem);      // not a .py
    Write("elsewhere/copy.py", kProblem);              // a problem, but not registered
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(root_ / rel, std::ios::binary) << text;
  }
  fs::path root_;
};

TEST(DefinesModel, OnlyATopLevelModelClass) {
  EXPECT_TRUE(DefinesModel(kProblem));
  EXPECT_TRUE(DefinesModel("class Model:\n  pass"));
  EXPECT_TRUE(DefinesModel("class Model(nn.Module):"));  // last line, no newline
  EXPECT_FALSE(DefinesModel(kCandidate));
  EXPECT_FALSE(DefinesModel("    class Model(nn.Module):\n"));
  EXPECT_FALSE(DefinesModel("# class Model(nn.Module)\nroot:x:0:0:root:/root:/bin/bash\n"));
  EXPECT_FALSE(DefinesModel(""));
}

// The one walk of a problem folder: *.py files that define Model, below it, sorted.
TEST_F(RegistryTest, ProblemFilesAreThePyFilesThatDefineModel) {
  fs::create_directories(root_ / "problems" / "level2");
  Write("problems/level2/gemm.py", kProblem);
  auto files = ProblemFiles(root_ / "problems");
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, root_ / "problems" / "level1" / "relu.py");
  EXPECT_EQ((*files)[1].path, root_ / "problems" / "level2" / "gemm.py");
  EXPECT_EQ((*files)[0].text, kProblem);  // read once, by the walk
  auto none = ProblemFiles(root_ / "problems" / "level1" / "relu.py" / "nothing");
  EXPECT_FALSE(none.ok());
}

TEST_F(RegistryTest, RegistersProblemsByRelativeIdOnly) {
  Registry r;
  ASSERT_TRUE(r.AddFolder(root_ / "problems").ok());
  EXPECT_EQ(r.size(), 1u);
  const Problem* p = r.Find("level1/relu");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->id, "level1/relu");
  EXPECT_EQ(p->text, kProblem);
  EXPECT_EQ(p->hash.size(), 64u);
  EXPECT_EQ(r.Find("level1/relu_new"), nullptr);
  EXPECT_EQ(r.Find("level1/notes"), nullptr);
  ASSERT_EQ(r.List().size(), 1u);
  EXPECT_EQ(r.List()[0], p);
}

TEST_F(RegistryTest, AFolderRegisteredDeeperGetsTheLevelIdAsAnAlias) {
  Registry r;
  ASSERT_TRUE(r.AddFolder(root_).ok());  // ids "problems/level1/relu", "elsewhere/copy"
  EXPECT_EQ(r.size(), 2u);
  const Problem* p = r.Find("level1/relu");  // eval::ProblemId of the path
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->id, "problems/level1/relu");
}

TEST_F(RegistryTest, AFolderWithoutProblemsOrNoFolderFails) {
  Registry r;
  EXPECT_EQ(r.AddFolder(root_ / "nope").code(), Code::kNotFound);
  fs::create_directories(root_ / "empty");
  Write("empty/x.py", kCandidate);
  EXPECT_EQ(r.AddFolder(root_ / "empty").code(), Code::kNotFound);
  EXPECT_EQ(r.size(), 0u);
}

TEST_F(RegistryTest, FilesResolveOnlyToRegisteredProblems) {
  Registry r;
  ASSERT_TRUE(r.AddFolder(root_ / "problems").ok());
  const Problem* p = r.Find("level1/relu");
  // The same file however it is spelt: with "..", through a symlink.
  EXPECT_EQ(r.FindFile(root_ / "problems" / "level1" / "relu.py"), p);
  EXPECT_EQ(r.FindFile(root_ / "elsewhere" / ".." / "problems" / "level1" / "relu.py"), p);
  fs::create_symlink(root_ / "problems" / "level1" / "relu.py", root_ / "link.py");
  EXPECT_EQ(r.FindFile(root_ / "link.py"), p);
  EXPECT_EQ(r.Resolve((root_ / "link.py").string()), p);
  // Anything else: an identical problem outside the registry, a symlink to one, a candidate
  // beside the problems, system files, files that do not exist.
  EXPECT_EQ(r.FindFile(root_ / "elsewhere" / "copy.py"), nullptr);
  fs::create_symlink(root_ / "elsewhere" / "copy.py", root_ / "problems" / "level1" / "sneaky.py");
  EXPECT_EQ(r.FindFile(root_ / "problems" / "level1" / "sneaky.py"), nullptr);
  EXPECT_EQ(r.FindFile(root_ / "problems" / "level1" / "relu_new.py"), nullptr);
  EXPECT_EQ(r.Resolve("/etc/passwd"), nullptr);
  EXPECT_EQ(r.Resolve((root_ / "problems" / "level1" / "missing.py").string()), nullptr);
  EXPECT_EQ(r.Resolve(""), nullptr);
  EXPECT_EQ(r.Resolve("level1/relu"), p);
}

}  // namespace
}  // namespace kf::problems
