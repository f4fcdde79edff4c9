// The wall clock in one place: milliseconds since the Unix epoch, what stored rows, Redis
// entries and the live pages carry. Durations use std::chrono::steady_clock instead.
#pragma once

#include <chrono>
#include <cstdint>

namespace kf {

inline int64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace kf
