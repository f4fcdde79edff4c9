// bench timeline: what a running bench did over time, for report.html and results.json:
// candidates done, the share of lanes busy, and the build queue. The bench samples the
// pipeline a few times a second; the timeline keeps at most `max_points` buckets by doubling
// the bucket width (merging neighbours) when a run grows long, so a day-long run and a
// one-minute run both draw as one readable chart. Pure: no clock, no threads.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <vector>

namespace kf::bench {

// One observation of the pipeline (pipeline::Stats, reduced to what the chart shows).
struct TimelineSample {
  double t_s = 0;           // since the run began
  size_t done = 0;          // samples with a verdict so far (from the store included)
  size_t lanes_busy = 0;    // lanes executing a candidate or preparing a problem now
  size_t build_queue = 0;   // candidates waiting for a build thread now
  size_t building = 0;      // candidates being built now
};

// One bucket [t0_s, t0_s + width): the last `done`, the mean share of lanes busy, and the
// largest build queue and build count seen in it.
struct TimelinePoint {
  double t0_s = 0;
  size_t done = 0;
  double lane_busy = 0;  // 0..1
  size_t build_queue = 0;
  size_t building = 0;
  size_t samples = 0;    // observations merged into it (weights the busy mean when merging)
};

class Timeline {
 public:
  explicit Timeline(int lanes = 1, double bucket_s = 1.0, size_t max_points = 240);

  // Samples must come in time order; one before the last bucket's start is put in that bucket.
  void Add(const TimelineSample& s);

  const std::vector<TimelinePoint>& points() const { return points_; }
  double bucket_s() const { return bucket_s_; }
  int lanes() const { return lanes_; }

  // {"bucket_s", "lanes", "points": [{"t_s", "done", "lane_busy", "build_queue", "building"}]}
  nlohmann::json ToJson() const;

 private:
  void Halve();  // merges neighbouring buckets: twice the width, half the points

  int lanes_;
  double bucket_s_;
  size_t max_points_;
  std::vector<TimelinePoint> points_;
};

}  // namespace kf::bench
