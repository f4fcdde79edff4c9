#include "bench/timeline.h"

#include <gtest/gtest.h>

#include "bench/charts.h"

namespace kf::bench {
namespace {

TEST(Timeline, BucketsKeepTheLastDoneTheMeanBusyAndTheLargestQueue) {
  Timeline t(2, 1.0, 100);
  t.Add({0.1, 0, 0, 5, 2});
  t.Add({0.5, 1, 2, 3, 2});
  t.Add({0.9, 2, 1, 7, 1});
  t.Add({1.2, 4, 2, 0, 0});
  ASSERT_EQ(t.points().size(), 2u);
  const TimelinePoint& a = t.points()[0];
  EXPECT_EQ(a.t0_s, 0);
  EXPECT_EQ(a.done, 2u);
  EXPECT_DOUBLE_EQ(a.lane_busy, (0 + 1 + 0.5) / 3);  // 0, 2 and 1 of 2 lanes
  EXPECT_EQ(a.build_queue, 7u);
  EXPECT_EQ(a.building, 2u);
  EXPECT_EQ(t.points()[1].t0_s, 1);
  EXPECT_DOUBLE_EQ(t.points()[1].lane_busy, 1.0);
}

TEST(Timeline, MoreLanesBusyThanThereAreCountsAsAllBusy) {
  Timeline t(1);
  t.Add({0, 0, 3, 0, 0});
  EXPECT_DOUBLE_EQ(t.points()[0].lane_busy, 1.0);
}

TEST(Timeline, ALongRunDoublesTheBucketInsteadOfGrowing) {
  Timeline t(1, 1.0, 10);
  for (int s = 0; s < 100; ++s) t.Add({s + 0.5, static_cast<size_t>(s), s % 2 ? 1u : 0u, 0, 0});
  EXPECT_LE(t.points().size(), 10u);
  EXPECT_GE(t.bucket_s(), 10.0);
  // Every second busy: each merged bucket is half busy, and done is the last count in it.
  for (const auto& p : t.points()) EXPECT_NEAR(p.lane_busy, 0.5, 1e-9) << p.t0_s;
  EXPECT_EQ(t.points().back().done, 99u);
  // Buckets stay in order, a bucket's width apart.
  for (size_t i = 1; i < t.points().size(); ++i) {
    EXPECT_DOUBLE_EQ(t.points()[i].t0_s - t.points()[i - 1].t0_s, t.bucket_s());
  }
}

TEST(Timeline, ASampleFromBeforeTheLastBucketJoinsIt) {
  Timeline t(1);
  t.Add({5.5, 3, 1, 0, 0});
  t.Add({4.9, 4, 0, 0, 0});  // a late observation: not a new bucket in the past
  ASSERT_EQ(t.points().size(), 1u);
  EXPECT_EQ(t.points()[0].done, 4u);
}

TEST(Timeline, JsonHasOnePointPerBucket) {
  Timeline t(4, 2.0);
  t.Add({0.5, 1, 4, 2, 1});
  t.Add({3.0, 2, 2, 0, 0});
  auto j = t.ToJson();
  EXPECT_EQ(j["bucket_s"], 2.0);
  EXPECT_EQ(j["lanes"], 4);
  ASSERT_EQ(j["points"].size(), 2u);
  EXPECT_EQ(j["points"][1]["t_s"], 2.0);
  EXPECT_EQ(j["points"][1]["lane_busy"], 0.5);
  EXPECT_EQ(j["points"][0]["build_queue"], 2);
}

TEST(TimelineChart, ThreePanelsOnOneAxisAndNothingWithoutSamples) {
  EXPECT_EQ(TimelineChart(Timeline(1), 10), "");
  Timeline t(2);
  for (int s = 0; s < 30; ++s) t.Add({s + 0.1, static_cast<size_t>(s / 3), 1, 30u - s, 1});
  std::string svg = TimelineChart(t, 10);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("samples done"), std::string::npos);
  EXPECT_NE(svg.find("lanes busy (2)"), std::string::npos);
  EXPECT_NE(svg.find("build queue"), std::string::npos);
  size_t lines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1))
    ++lines;
  EXPECT_EQ(lines, 4u);  // done; busy; waiting and building
  EXPECT_NE(svg.find(">30<"), std::string::npos);  // the queue panel's top label: its largest
  EXPECT_NE(svg.find(">30s<"), std::string::npos);  // the axis ends at the run's end
  EXPECT_EQ(svg.find("<script"), std::string::npos);
}

}  // namespace
}  // namespace kf::bench
