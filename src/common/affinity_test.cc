#include "common/affinity.h"

#include <gtest/gtest.h>

namespace kf {
namespace {

std::vector<int> Range(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// On the H200 box (16 cores, one GPU) the lane gets two cores of its own and builds the other 14;
// two lanes four; a 2-core machine (CI) keeps every core for both.
TEST(SplitCpus, ReservesCoresForLanesWhenEnoughRemain) {
  CpuSplit one = SplitCpus(Range(16), 1);
  ASSERT_EQ(one.lanes.size(), 1u);
  EXPECT_EQ(one.lanes[0], (std::vector<int>{14, 15}));
  EXPECT_EQ(one.builds.size(), 14u);
  EXPECT_EQ(one.builds.back(), 13);
  CpuSplit two = SplitCpus(Range(32), 2);
  ASSERT_EQ(two.lanes.size(), 2u);
  EXPECT_EQ(two.lanes[0], (std::vector<int>{30, 31}));
  EXPECT_EQ(two.lanes[1], (std::vector<int>{28, 29}));
  EXPECT_EQ(two.builds.size(), 28u);
  EXPECT_TRUE(SplitCpus(Range(2), 1).lanes.empty());
  EXPECT_TRUE(SplitCpus(Range(2), 1).builds.empty());
  EXPECT_TRUE(SplitCpus(Range(5), 1).lanes.empty());  // 3 left for builds: too few
  EXPECT_FALSE(SplitCpus(Range(6), 1).lanes.empty());
  // Not numbered from 0 (a cpuset): the split keeps the machine's own numbers.
  CpuSplit odd = SplitCpus({4, 5, 6, 7, 8, 9, 10, 11}, 1);
  EXPECT_EQ(odd.lanes[0], (std::vector<int>{10, 11}));
  EXPECT_EQ(odd.builds.front(), 4);
}

TEST(PinProcess, NoCpusIsNothing) { EXPECT_TRUE(PinProcess(0, {}).ok()); }

}  // namespace
}  // namespace kf
