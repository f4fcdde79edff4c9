// replay: BDR ("bad data replay"), the reward service's bounded FIFO of groups whose samples
// all failed (GroupStats::all_failed). GRPO learns nothing from such a group (every advantage is
// 0), so the trainer is offered its prompt again later: GET /v1/bdr/sample?n=N answers, for
// each of N batch slots, a replay with probability p (oldest first, removed from the buffer)
// and says how many slots to fill with fresh prompts. A replayed prompt that fails again comes
// back through POST /v1/groups. The buffer survives a restart: in the SQLite store (embedded
// engine) or in Redis (--redis), where several servers share it.
//
// Thread-safety: every class here may be used from any number of threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/status.h"
#include "queue/redis_url.h"
#include "serve/groups.h"
#include "store/store.h"

namespace kf::serve {

// One buffered group: what a trainer needs to send its prompt again.
struct ReplayEntry {
  std::string key;       // ReplayKey: the same problem and prompt are one entry
  nlohmann::json value;  // {"problem"|"problem_source", "prompt", "metadata", "group_id",
                         // "samples", "best_reward"}
  int64_t failures = 1;  // all-failed groups recorded under this key while it was buffered
  int64_t first_failed_at_ms = 0;
  int64_t last_failed_at_ms = 0;
};

// Where the FIFO lives.
class ReplayStorage {
 public:
  virtual ~ReplayStorage() = default;
  // Appends the entry, or for a key already there counts one more failure, takes the new value
  // and keeps its place; then drops the oldest beyond `capacity`. Returns how many it dropped.
  virtual Result<int64_t> Push(const std::string& key, const nlohmann::json& value,
                               int64_t capacity) = 0;
  // Removes and returns up to n of the oldest, oldest first; never the same entry to two callers.
  virtual Result<std::vector<ReplayEntry>> Take(int64_t n) = 0;
  virtual Result<int64_t> Size() = 0;
  virtual const char* Name() const = 0;  // "sqlite" or "redis"
};

// The store's replay table (store::Store::PushReplay ...); shares the store.
std::unique_ptr<ReplayStorage> MakeSqliteReplay(std::shared_ptr<store::Store> store);
// Redis: <prefix>:bdr:order (a list of keys, oldest first) and <prefix>:bdr:entries (a hash:
// key -> "failures first_ms last_ms value_json"), changed only by Lua scripts (atomic). Connects
// on first use and again after a failure.
std::unique_ptr<ReplayStorage> MakeRedisReplay(const queue::RedisAddress& addr,
                                               const std::string& prefix);

struct BdrOptions {
  int64_t capacity = 1024;    // groups kept; the oldest go first beyond it; 0 turns BDR off
  double replay_prob = 0.25;  // per slot of a sample request; a request's ?p= overrides it
  uint64_t seed = 0;          // of the slot draws; 0: from std::random_device
};

// The identity of a buffered group: SHA-256 of the problem (id or source) and the prompt.
std::string ReplayKey(const GroupRequest& g);
// The entry's value for a group.
nlohmann::json ReplayValue(const GroupRequest& g, const GroupStats& s);
// How many of n slots are replays: each one independently with probability p (Binomial(n, p)).
int64_t ReplaySlots(int64_t n, double p, std::mt19937_64& rng);

struct BdrCounts {
  int64_t recorded = 0;  // all-failed groups recorded (repeats of a buffered key included)
  int64_t replayed = 0;  // prompts handed out by /v1/bdr/sample
  int64_t evicted = 0;   // entries dropped, oldest first, to stay within capacity
  int64_t errors = 0;    // records that failed (the store or Redis could not be written)
};

class Bdr {
 public:
  Bdr(BdrOptions opt, std::unique_ptr<ReplayStorage> storage);

  // Records the group if it is all-failed and BDR is on; true when recorded. An error leaves
  // the group unrecorded (counted in errors); the caller still answers its rewards.
  Result<bool> Record(const GroupRequest& g, const GroupStats& s);

  struct Sample {
    std::vector<ReplayEntry> replay;  // at most n, oldest first
    int64_t fresh = 0;                // n - replay.size(): slots for fresh prompts
    double p = 0;                     // the probability used
  };
  // n in [1, max_n]; p (when given) in [0, 1].
  Result<Sample> Draw(int64_t n, std::optional<double> p);

  Result<int64_t> Size() { return storage_->Size(); }
  BdrCounts counts() const;
  const BdrOptions& options() const { return opt_; }
  const char* storage_name() const { return storage_->Name(); }

 private:
  const BdrOptions opt_;
  std::unique_ptr<ReplayStorage> storage_;
  mutable std::mutex mu_;
  std::mt19937_64 rng_;  // guarded by mu_
  BdrCounts counts_;     // guarded by mu_
};

// ReplayEntry as /v1/bdr/sample answers it: its value's fields plus "failures",
// "first_failed_at_ms", "last_failed_at_ms".
nlohmann::json ReplayEntryJson(const ReplayEntry& e);

}  // namespace kf::serve
