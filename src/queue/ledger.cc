#include "queue/ledger.h"

namespace kf::queue {

Ledger::Ledger(LedgerOptions opt) : opt_(opt) {}

void Ledger::DropSpecLocked(Record& r) {
  if (!r.spec) return;
  open_.erase(r.seq);
  r.spec.reset();
}

void Ledger::Hold(const JobSpec& job) {
  std::lock_guard<std::mutex> g(mu_);
  auto [it, fresh] = records_.try_emplace(job.id);
  Record& r = it->second;
  if (fresh) {
    r.identity = IdentityOf(job);
    order_.push_back(job.id);
  }
  if (!r.spec) {
    r.spec = job;
    r.seq = next_seq_++;
    open_[r.seq] = job.id;
  }
  while (open_.size() > opt_.max_specs) DropSpecLocked(records_.at(open_.begin()->second));
  while (records_.size() > opt_.max_ids && !order_.empty()) {
    auto old = records_.find(order_.front());
    order_.pop_front();
    if (old == records_.end()) continue;
    DropSpecLocked(old->second);
    records_.erase(old);
  }
}

Decision Ledger::Reconcile(const std::string& id, Seen seen) {
  std::lock_guard<std::mutex> g(mu_);
  Decision d;
  auto it = records_.find(id);
  if (seen == Seen::kDone) {
    if (it != records_.end()) DropSpecLocked(it->second);
    return d;
  }
  if (seen == Seen::kInFlight) return d;
  if (it == records_.end()) {
    d.action = Decision::Action::kUnknown;
  } else if (it->second.spec) {
    d.action = Decision::Action::kRequeue;
    d.spec = it->second.spec;
  } else {
    d.action = Decision::Action::kLost;
    d.identity = it->second.identity;
  }
  return d;
}

bool Ledger::Knows(const std::string& id) const {
  std::lock_guard<std::mutex> g(mu_);
  return records_.count(id) > 0;
}

std::vector<std::string> Ledger::Open() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::string> out;
  out.reserve(open_.size());
  for (const auto& [seq, id] : open_) out.push_back(id);
  return out;
}

size_t Ledger::open_count() const {
  std::lock_guard<std::mutex> g(mu_);
  return open_.size();
}

size_t Ledger::known_count() const {
  std::lock_guard<std::mutex> g(mu_);
  return records_.size();
}

}  // namespace kf::queue
