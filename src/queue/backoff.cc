#include "queue/backoff.h"

#include <cstdio>

namespace kf::queue {
namespace {

std::string Seconds(double s) {
  char buf[32];
  if (s < 1.0) {
    std::snprintf(buf, sizeof(buf), "%.0f ms", s * 1000);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f s", s);
  }
  return buf;
}

}  // namespace

std::chrono::milliseconds Backoff::Next() {
  auto out = next_;
  next_ = std::min(cap_, next_ * 2);
  return out;
}

void RedisOutage::Failed(const Status& why, Clock::time_point now) {
  if (down_) return;
  down_ = true;
  since_ = now;
  if (log_) {
    *log_ << who_ << ": redis down: " << why.message() << "; retrying after "
          << Seconds(first_.count() / 1000.0) << ", then less often (every "
          << Seconds(cap_.count() / 1000.0) << " at most)" << std::endl;
  }
}

void RedisOutage::Ok(Clock::time_point now) {
  if (!down_) return;
  down_ = false;
  if (log_) {
    *log_ << who_ << ": redis back after "
          << Seconds(std::chrono::duration<double>(now - since_).count()) << std::endl;
  }
}

}  // namespace kf::queue
