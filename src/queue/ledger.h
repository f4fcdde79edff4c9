// ledger: what `kforge serve --redis` keeps of the jobs it submitted, apart from Redis, so that
// a job whose record vanished with Redis's data (a restart without persistence, a flush, a
// failover to a replica that was behind, an eviction) is queued again from this copy, or
// answered `lost` at once; never left for a client to wait on, never "queued" in one answer and
// 404 in the next.
//
// Each server holds its own jobs only: behind a balancer, a job lost with Redis's data is
// queued again by the server that took it. A restarted server holds nothing.
//
// Thread-safety: every method may be called from any thread (one mutex).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "queue/job.h"

namespace kf::queue {

struct LedgerOptions {
  // Jobs held with their whole spec (problem and candidate texts, ~10-50 KB each) until they
  // are done: about the --max-in-flight jobs one server has open; beyond it the oldest spec is
  // dropped (its job, if lost, is answered lost instead of queued again).
  size_t max_specs = 10'000;
  // Ids remembered at all (done, or their spec dropped): such a job missing from Redis is
  // answered lost, not 404. About 150 bytes each.
  size_t max_ids = 200'000;
};

// What Redis holds of a job.
enum class Seen { kDone, kInFlight, kMissing };

struct Decision {
  enum class Action {
    kNothing,  // done or in flight: Redis's answer stands
    kRequeue,  // missing, and a copy is held: enqueue `spec` again
    kLost,     // missing, known here without a copy: answer lost (`identity` for its verdict)
    kUnknown,  // missing and never held here: 404
  };
  Action action = Action::kNothing;
  std::optional<JobSpec> spec;
  JobIdentity identity;
};

class Ledger {
 public:
  explicit Ledger(LedgerOptions opt = {});

  // The job was submitted (or found in flight) through this server: hold its copy.
  void Hold(const JobSpec& job);
  // Decides from what Redis holds; kDone also drops the held copy (the id stays known).
  Decision Reconcile(const std::string& id, Seen seen);
  bool Knows(const std::string& id) const;
  // Ids held with a copy (not known done), oldest first.
  std::vector<std::string> Open() const;
  size_t open_count() const;
  size_t known_count() const;

 private:
  struct Record {
    JobIdentity identity;
    std::optional<JobSpec> spec;
    uint64_t seq = 0;  // key in open_ while spec is held
  };
  void DropSpecLocked(Record& r);

  const LedgerOptions opt_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Record> records_;  // guarded by mu_
  std::map<uint64_t, std::string> open_;             // guarded by mu_: seq -> id, with spec
  std::deque<std::string> order_;                    // guarded by mu_: ids, oldest first
  uint64_t next_seq_ = 1;                            // guarded by mu_
};

}  // namespace kf::queue
