// store: the embedded SQLite database of baselines, verdicts and the reward service's replay
// buffer (one file, by default under ~/.cache/kforge). SQLite's C API stays inside store.cc; every
// SQLite error comes out as a kf::Status and no exception crosses this interface.
//
// Thread-safety: a Store may be shared by any number of threads; one mutex serialises use of
// its single connection. Several processes may open the same file: WAL mode lets readers run
// beside one writer, and a busy writer is waited for up to kBusyTimeoutMs.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "score/verdict.h"

namespace kf::store {

class Connection;  // RAII owner of the sqlite3 handle, defined in store.cc

class Store {
 public:
  // Waiting this long for another writer covers a slow disk and a big transaction, yet a
  // stuck process still surfaces as an error rather than a hang.
  static constexpr int kBusyTimeoutMs = 10'000;
  // Bumped with each schema change; Open migrates older files step by step and refuses newer.
  static constexpr int kSchemaVersion = 2;

  // Opens or creates the database file (parent folders created), WAL mode, busy timeout,
  // schema created/migrated (a schema_version table). A file that is not a database, or one
  // from a newer kforge, gives an error Status.
  static Result<std::unique_ptr<Store>> Open(const std::filesystem::path& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Baselines (eager/compile times) keyed by a caller-built key string; value is JSON.
  Result<std::optional<nlohmann::json>> GetBaseline(const std::string& key);
  Status PutBaseline(const std::string& key, const nlohmann::json& value);  // upsert

  // Verdicts keyed by eval::VerdictKey (problem, candidate, every verdict-shaping option, and
  // the toolchain and device model that ran it).
  Result<std::optional<Verdict>> GetVerdict(const std::string& job_key);
  // Upsert. Status, reward and times are also stored as columns so they can be queried
  // without parsing the JSON; created_at_ms keeps the first write, updated_at_ms the last.
  Status PutVerdict(const std::string& job_key, const Verdict& v);

  // The replay buffer of `kforge serve` (BDR, serve/replay.h): a FIFO of JSON values, each
  // under a caller-built key, oldest first. Every call is one transaction, so several processes
  // sharing the file never hand out one entry twice.
  struct ReplayRow {
    std::string key;
    nlohmann::json value;
    int64_t failures = 1;  // times the key was pushed while in the buffer
    int64_t created_at_ms = 0;
    int64_t updated_at_ms = 0;
  };
  // Appends the key at the back; a key already there keeps its place, counts one more failure
  // and takes the new value. Then removes the oldest entries beyond `capacity` (>= 0) and
  // returns how many it removed.
  Result<int64_t> PushReplay(const std::string& key, const nlohmann::json& value, int64_t capacity);
  // Removes and returns up to `n` of the oldest entries, oldest first.
  Result<std::vector<ReplayRow>> TakeReplay(int64_t n);
  Result<int64_t> CountReplay();

 private:
  explicit Store(std::unique_ptr<Connection> db);

  std::mutex mu_;
  std::unique_ptr<Connection> db_;  // guarded by mu_
};

}  // namespace kf::store
