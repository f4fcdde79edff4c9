#include "queue/backoff.h"

#include <gtest/gtest.h>

#include <sstream>

namespace kf::queue {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, DoublesUpToTheCapAndStartsOverAfterReset) {
  Backoff b(milliseconds(100), milliseconds(500));
  std::vector<long long> waits;
  for (int i = 0; i < 6; ++i) waits.push_back(b.Next().count());
  EXPECT_EQ(waits, (std::vector<long long>{100, 200, 400, 500, 500, 500}));
  b.Reset();
  EXPECT_EQ(b.Next().count(), 100);
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(RedisOutage, OneLineWhenRedisGoesAndOneWhenItIsBack) {
  std::ostringstream log;
  Backoff b(milliseconds(100), milliseconds(5'000));
  RedisOutage o(&log, "worker w1", b);
  auto t0 = RedisOutage::Clock::time_point{};
  o.Ok(t0);
  EXPECT_EQ(log.str(), "");  // up and staying up: silent
  for (int i = 0; i < 50; ++i) {
    o.Failed(Status::Unavailable("cannot connect to Redis at h:1: Connection refused"),
             t0 + milliseconds(i * 100));
  }
  EXPECT_TRUE(o.down());
  EXPECT_EQ(Lines(log.str()), 1);
  EXPECT_NE(log.str().find("worker w1: redis down: cannot connect to Redis at h:1: Connection "
                           "refused"),
            std::string::npos)
      << log.str();
  o.Ok(t0 + milliseconds(12'300));
  o.Ok(t0 + milliseconds(12'400));
  EXPECT_FALSE(o.down());
  EXPECT_EQ(Lines(log.str()), 2);
  EXPECT_NE(log.str().find("worker w1: redis back after 12.3 s"), std::string::npos) << log.str();
  o.Failed(Status::Timeout("x"), t0 + milliseconds(20'000));
  EXPECT_EQ(Lines(log.str()), 3);  // a second outage is a new change
}

}  // namespace
}  // namespace kf::queue
