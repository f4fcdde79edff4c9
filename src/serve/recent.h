// recent: the last jobs the reward service was sent (any route), for the web UI's live view and
// job pages. Bounded: the newest `capacity` jobs, and their candidate texts only while they
// fit in `max_text_bytes` together (older texts are dropped first; the ids stay).
//
// Thread-safety: every method may be called from any number of threads.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "queue/job.h"

namespace kf::serve {

class RecentJobs {
 public:
  struct Entry {
    std::string id, problem_id, route;
    int64_t submitted_at_ms = 0;
    std::string candidate;  // "" once dropped (or from Newest, which leaves texts out)
  };

  explicit RecentJobs(size_t capacity = 200, size_t max_text_bytes = 16 << 20);
  // A job submitted again moves to the front with its new route and time.
  void Add(const queue::JobSpec& job, const std::string& route, int64_t now_ms);
  std::vector<Entry> Newest(size_t n) const;  // newest first, texts left out
  std::optional<Entry> Find(const std::string& id) const;

 private:
  const size_t capacity_, max_text_bytes_;
  mutable std::mutex mu_;
  std::deque<Entry> entries_;  // guarded by mu_; newest first
  size_t text_bytes_ = 0;      // guarded by mu_
};

}  // namespace kf::serve
