#include "execute/policy.h"

#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace kf::execute {
namespace {

TEST(Policy, NamesRoundTrip) {
  for (Policy p : {Policy::kStrict, Policy::kKernelBench}) {
    EXPECT_EQ(ParsePolicy(PolicyName(p)), p);
  }
  EXPECT_FALSE(ParsePolicy("lenient").has_value());
}

// What each policy allows beyond strict: kernelbench lists PyTorch compute beside a real
// kernel and notes CUDA graphs; strict allows neither.
TEST(Policy, AllowsSaysWhatKernelBenchRelaxes) {
  const PolicyAllows strict = Allows(Policy::kStrict);
  EXPECT_FALSE(strict.pytorch_compute);
  EXPECT_FALSE(strict.cuda_graphs);
  const PolicyAllows kb = Allows(Policy::kKernelBench);
  EXPECT_TRUE(kb.pytorch_compute);
  EXPECT_TRUE(kb.cuda_graphs);
}

TEST(Policy, AllowlistFileSkipsCommentsAndBlanks) {
  auto path = std::filesystem::temp_directory_path() / ("kf-allow-" + std::to_string(getpid()));
  std::ofstream(path) << "# plumbing\naten::empty\n\n  aten::view   # views\r\n";
  auto ops = ReadAllowlist(path);
  ASSERT_TRUE(ops.ok()) << ops.status().message();
  EXPECT_EQ(*ops, (std::set<std::string>{"aten::empty", "aten::view"}));
  std::ofstream(path) << "# nothing\n";
  EXPECT_FALSE(ReadAllowlist(path).ok());
  std::filesystem::remove(path);
  EXPECT_FALSE(ReadAllowlist(path).ok());
}

// The shipped list holds the plumbing the honest examples use, and no compute op.
TEST(Policy, ShippedAllowlistIsPlumbingOnly) {
  auto ops = ReadAllowlist(DefaultAllowlist(std::filesystem::path(KFORGE_SOURCE_DIR) / "runner"));
  ASSERT_TRUE(ops.ok()) << ops.status().message();
  for (const char* op : {"aten::empty", "aten::empty_like", "aten::view", "aten::contiguous",
                         "aten::copy_", "aten::zeros", "aten::reshape"}) {
    EXPECT_EQ(ops->count(op), 1u) << op;
  }
  for (const char* op : {"aten::matmul", "aten::relu", "aten::softmax", "aten::add",
                         "aten::conv2d", "aten::mm", "aten::sum", "aten::mul", "aten::addmm"}) {
    EXPECT_EQ(ops->count(op), 0u) << op;
  }
}

}  // namespace
}  // namespace kf::execute
