// backoff: how a process that lost Redis waits before trying again, and what it says about it:
// one line when Redis goes away ("redis down: <why>; retrying every 0.1 s up to 5 s") and one
// when it is back ("redis back after 12.3 s"), never a line per attempt. Waits double from
// `first` up to `cap`. No jitter: reconnecting is cheap for Redis even from many workers.
//
// Thread-safety: none; one loop owns each object.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "common/status.h"

namespace kf::queue {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds first, std::chrono::milliseconds cap)
      : first_(first), cap_(cap), next_(first) {}
  // The wait before the next attempt; each call doubles the one after, up to the cap.
  std::chrono::milliseconds Next();
  void Reset() { next_ = first_; }
  std::chrono::milliseconds first() const { return first_; }
  std::chrono::milliseconds cap() const { return cap_; }

 private:
  std::chrono::milliseconds first_, cap_, next_;
};

// Logs Redis going down and coming back, once per change. `who` starts each line
// ("worker gpu-1", "kforge serve").
class RedisOutage {
 public:
  using Clock = std::chrono::steady_clock;
  RedisOutage(std::ostream* log, std::string who, const Backoff& backoff)
      : log_(log), who_(std::move(who)), first_(backoff.first()), cap_(backoff.cap()) {}
  // A failure; logged only when Redis was up until now.
  void Failed(const Status& why, Clock::time_point now = Clock::now());
  // A success; logged only when a failure was.
  void Ok(Clock::time_point now = Clock::now());
  bool down() const { return down_; }

 private:
  std::ostream* log_;
  std::string who_;
  std::chrono::milliseconds first_, cap_;
  bool down_ = false;
  Clock::time_point since_;
};

}  // namespace kf::queue
