#include "common/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace kf {
namespace {
namespace fs = std::filesystem;

class ReadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kf_files_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& name, const std::string& bytes) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  fs::path dir_;
};

TEST_F(ReadFileTest, ReadsTheExactBytes) {
  // A NUL, CR LF, a byte that is not UTF-8, and no final newline.
  const std::string bytes = std::string("a\0b\r\n", 5) + '\xff' + "end";
  ASSERT_EQ(bytes.size(), 9u);
  auto text = ReadFile(Write("binary", bytes));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, bytes);
}

TEST_F(ReadFileTest, ReadsAnEmptyFile) {
  auto text = ReadFile(Write("empty", ""));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "");
}

TEST_F(ReadFileTest, ReadsAFileOfManyChunks) {
  std::string bytes;
  for (int i = 0; i < 300007; ++i) bytes += static_cast<char>(i % 251);
  auto text = ReadFile(Write("big", bytes));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(text->size(), bytes.size());
  EXPECT_EQ(*text, bytes);
}

// /proc files say they are empty (size 0) and hold text all the same.
TEST(ReadFile, ReadsAProcFileToItsEnd) {
  auto text = ReadFile("/proc/self/status");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("Pid:"), std::string::npos) << *text;
}

TEST_F(ReadFileTest, AMissingFileIsNotFoundNamingThePathAndTheReason) {
  const fs::path p = dir_ / "no_such_file.py";
  auto text = ReadFile(p);
  const int err = errno;  // left for callers that phrase their own message
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Code::kNotFound);
  EXPECT_EQ(text.status().message(), "cannot read " + p.string() + ": No such file or directory");
  EXPECT_EQ(err, ENOENT);
  // Below a file that is not a folder: missing too.
  auto under = ReadFile(Write("plain", "x") / "child");
  ASSERT_FALSE(under.ok());
  EXPECT_EQ(under.status().code(), Code::kNotFound);
}

TEST_F(ReadFileTest, AFolderIsAnIoError) {
  auto text = ReadFile(dir_);
  const int err = errno;
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Code::kIoError);
  EXPECT_EQ(text.status().message(), "cannot read " + dir_.string() + ": Is a directory");
  EXPECT_EQ(err, EISDIR);
}

}  // namespace
}  // namespace kf
