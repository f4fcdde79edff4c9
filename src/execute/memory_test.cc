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

// KernelBench's 19_ReLU and 38_L1Norm on an 80 GiB H100 hand each phase's buffers back before
// the next phase's are made; a problem of a few MiB keeps its slots from one candidate to the
// next, as before.
TEST(ReleaseBetweenPhases, BigProblemsOnly) {
  EXPECT_TRUE(ReleaseBetweenPhases({6 * kGiB, 6 * kGiB, 70 * kGiB, 80 * kGiB}));
  EXPECT_TRUE(ReleaseBetweenPhases({8 * kGiB, 8 * kGiB, 70 * kGiB, 80 * kGiB}));
  EXPECT_FALSE(ReleaseBetweenPhases({16 << 20, 16 << 20, 70 * kGiB, 80 * kGiB}));
  // Over 1/64 of what the judge plans with: the share over which it keeps no copies either.
  EXPECT_TRUE(ReleaseBetweenPhases({64 << 20, 64 << 20, 376 << 20, 376 << 20}));
  EXPECT_FALSE(ReleaseBetweenPhases({1 << 20, 1 << 20, 128 << 20, 128 << 20}));
  EXPECT_TRUE(ReleaseBetweenPhases({1 << 20, int64_t{1} << 20, 0, 127 << 20}));
  // The CPU without a budget plans with nothing: as before.
  EXPECT_FALSE(ReleaseBetweenPhases({6 * kGiB, 6 * kGiB, 0, 0}));
}

TEST(MemoryFacts, FromTheJudgesReply) {
  auto m = MemoryFactsFromJson(
      {{"input_bytes", 10}, {"output_bytes", 20}, {"free_bytes", 30}, {"plan_bytes", 40}});
  EXPECT_EQ(m.input_bytes, 10);
  EXPECT_EQ(m.output_bytes, 20);
  EXPECT_EQ(m.free_bytes, 30);
  EXPECT_EQ(m.plan_bytes, 40);
  EXPECT_EQ(MemoryFactsFromJson(nullptr).free_bytes, 0);
}

}  // namespace
}  // namespace kf::execute
