#include "bench/timeline.h"

#include <algorithm>
#include <cmath>

namespace kf::bench {

Timeline::Timeline(int lanes, double bucket_s, size_t max_points)
    : lanes_(std::max(1, lanes)),
      bucket_s_(bucket_s > 0 ? bucket_s : 1.0),
      max_points_(std::max<size_t>(2, max_points)) {}

void Timeline::Add(const TimelineSample& s) {
  const double busy = std::min(1.0, static_cast<double>(s.lanes_busy) / lanes_);
  double start = std::floor(std::max(0.0, s.t_s) / bucket_s_) * bucket_s_;
  if (!points_.empty() && start < points_.back().t0_s) start = points_.back().t0_s;
  if (points_.empty() || start > points_.back().t0_s) {
    if (points_.size() == max_points_) {
      Halve();
      Add(s);
      return;
    }
    TimelinePoint p;
    p.t0_s = start;
    points_.push_back(p);
  }
  TimelinePoint& p = points_.back();
  p.done = std::max(p.done, s.done);
  p.lane_busy = (p.lane_busy * p.samples + busy) / (p.samples + 1);
  p.build_queue = std::max(p.build_queue, s.build_queue);
  p.building = std::max(p.building, s.building);
  ++p.samples;
}

void Timeline::Halve() {
  bucket_s_ *= 2;
  std::vector<TimelinePoint> merged;
  for (const auto& p : points_) {
    const double start = std::floor(p.t0_s / bucket_s_) * bucket_s_;
    if (merged.empty() || start > merged.back().t0_s) {
      TimelinePoint q = p;
      q.t0_s = start;
      merged.push_back(q);
      continue;
    }
    TimelinePoint& q = merged.back();
    const size_t n = q.samples + p.samples;
    q.lane_busy = n ? (q.lane_busy * q.samples + p.lane_busy * p.samples) / n : 0;
    q.samples = n;
    q.done = std::max(q.done, p.done);
    q.build_queue = std::max(q.build_queue, p.build_queue);
    q.building = std::max(q.building, p.building);
  }
  points_ = std::move(merged);
}

nlohmann::json Timeline::ToJson() const {
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : points_) {
    pts.push_back({{"t_s", p.t0_s},
                   {"done", p.done},
                   {"lane_busy", std::round(p.lane_busy * 1000) / 1000},
                   {"build_queue", p.build_queue},
                   {"building", p.building}});
  }
  return {{"bucket_s", bucket_s_}, {"lanes", lanes_}, {"points", pts}};
}

}  // namespace kf::bench
