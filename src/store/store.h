// store: the embedded SQLite database of baselines and verdicts (one file, by default under
// ~/.cache/kforge). SQLite's C API stays inside store.cc; every SQLite error comes out as a
// kf::Status and no exception crosses this interface.
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
  static constexpr int kSchemaVersion = 1;

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

 private:
  explicit Store(std::unique_ptr<Connection> db);

  std::mutex mu_;
  std::unique_ptr<Connection> db_;  // guarded by mu_
};

}  // namespace kf::store
