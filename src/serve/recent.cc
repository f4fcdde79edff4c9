#include "serve/recent.h"

namespace kf::serve {

RecentJobs::RecentJobs(size_t capacity, size_t max_text_bytes)
    : capacity_(std::max<size_t>(1, capacity)), max_text_bytes_(max_text_bytes) {}

void RecentJobs::Add(const queue::JobSpec& job, const std::string& route, int64_t now_ms) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->id == job.id) {
      text_bytes_ -= it->candidate.size();
      entries_.erase(it);
      break;
    }
  }
  Entry e{job.id, job.problem_id, route, now_ms,
          job.candidate.size() <= max_text_bytes_ ? job.candidate : std::string()};
  text_bytes_ += e.candidate.size();
  entries_.push_front(std::move(e));
  while (entries_.size() > capacity_) {
    text_bytes_ -= entries_.back().candidate.size();
    entries_.pop_back();
  }
  // Over the text budget: drop the oldest texts (never the newest one's).
  for (auto it = entries_.rbegin(); text_bytes_ > max_text_bytes_ && it != entries_.rend(); ++it) {
    text_bytes_ -= it->candidate.size();
    it->candidate.clear();
    it->candidate.shrink_to_fit();
  }
}

std::vector<RecentJobs::Entry> RecentJobs::Newest(size_t n) const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<Entry> out;
  for (const auto& e : entries_) {
    if (out.size() >= n) break;
    out.push_back({e.id, e.problem_id, e.route, e.submitted_at_ms, ""});
  }
  return out;
}

std::optional<RecentJobs::Entry> RecentJobs::Find(const std::string& id) const {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& e : entries_) {
    if (e.id == id) return e;
  }
  return std::nullopt;
}

}  // namespace kf::serve
