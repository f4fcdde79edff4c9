#include "bench/progress.h"

#include <gtest/gtest.h>

namespace kf::bench {
namespace {

TEST(Progress, LineShowsCountsRateAndEta) {
  Progress p;
  p.total = 120;
  p.done = 30;
  p.reused = 10;
  p.by_status = {{"ok", 20}, {"incorrect", 10}};
  // 20 evaluated in 100 s: 12/min; 90 left: 7m30s.
  EXPECT_EQ(ProgressLine(p, 100),
            "30/120 25%  12.0/min  ETA 7m30s  incorrect 10  ok 20  (reused 10)");
}

TEST(Progress, NothingEvaluatedYet) {
  Progress p;
  p.total = 4;
  EXPECT_EQ(ProgressLine(p, 3), "0/4 0%  ETA ?");
}

TEST(Progress, Durations) {
  EXPECT_EQ(Duration(12.2), "12s");
  EXPECT_EQ(Duration(351), "5m51s");
  EXPECT_EQ(Duration(3720), "1h02m");
}

}  // namespace
}  // namespace kf::bench
