#include "execute/memory.h"

#include <gtest/gtest.h>

namespace kf::execute {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(FitTimingPool, SmallProblemsKeepTheRequestedRotation) {
  EXPECT_EQ(FitTimingPool(3, {64 << 20, 64 << 20, 100 * kGiB}), 3);
}

// KernelBench's current 19_ReLU: 6 GiB in, 6 GiB out. A set costs 24 GiB (judge in + out,
// the candidate's copy of the inputs and last output); a third of what is free takes how many fit.
TEST(FitTimingPool, BigProblemsShrinkTheRotationInsteadOfFailing) {
  EXPECT_EQ(FitTimingPool(3, {6 * kGiB, 6 * kGiB, 130 * kGiB}), 1);
  EXPECT_EQ(FitTimingPool(3, {1 * kGiB, 1 * kGiB, 30 * kGiB}), 2);
  EXPECT_EQ(FitTimingPool(3, {1 * kGiB, 1 * kGiB, 40 * kGiB}), 3);
}

TEST(FitTimingPool, NeverLessThanOneAndUnknownMemoryKeepsTheRequest) {
  EXPECT_EQ(FitTimingPool(3, {40 * kGiB, 40 * kGiB, 10 * kGiB}), 1);
  EXPECT_EQ(FitTimingPool(3, {6 * kGiB, 6 * kGiB, 0}), 3);
  EXPECT_EQ(FitTimingPool(0, {1, 1, 100}), 1);
}

TEST(MemoryFacts, FromTheJudgesReply) {
  auto m = MemoryFactsFromJson({{"input_bytes", 10}, {"output_bytes", 20}, {"free_bytes", 30}});
  EXPECT_EQ(m.input_bytes, 10);
  EXPECT_EQ(m.output_bytes, 20);
  EXPECT_EQ(m.free_bytes, 30);
  EXPECT_EQ(MemoryFactsFromJson(nullptr).free_bytes, 0);
}

}  // namespace
}  // namespace kf::execute
