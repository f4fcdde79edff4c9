#include "store/store.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <random>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "store/sqlite.h"

namespace kf::store {
namespace {

using nlohmann::json;

// Migration i (0-based) takes the schema from version i to i + 1. Append only: files in the
// field are at every earlier version.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE baselines (
  key           TEXT PRIMARY KEY,
  value_json    TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL
);
CREATE TABLE verdicts (
  job_key        TEXT PRIMARY KEY,
  problem_hash   TEXT NOT NULL,
  candidate_hash TEXT NOT NULL,
  status         TEXT NOT NULL,
  reward         REAL,
  created_at_ms  INTEGER NOT NULL,
  updated_at_ms  INTEGER NOT NULL,
  verdict_json   TEXT NOT NULL
);
CREATE INDEX verdicts_by_problem ON verdicts(problem_hash);
)sql",
    // 2: the reward service's replay buffer (BDR). seq gives the FIFO order.
    R"sql(
CREATE TABLE replay (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  key           TEXT NOT NULL UNIQUE,
  value_json    TEXT NOT NULL,
  failures      INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);
)sql",
    // 3: bench runs (which verdicts a run had, with their numbers as columns for the web UI's
    // lists and leaderboards) and the source texts of candidates and problems.
    R"sql(
CREATE TABLE runs (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  model          TEXT NOT NULL,
  started_at     TEXT NOT NULL,
  recorded_at_ms INTEGER NOT NULL,
  backend        TEXT NOT NULL,
  device         TEXT NOT NULL,
  policy         TEXT NOT NULL,
  k              INTEGER NOT NULL,
  samples        INTEGER NOT NULL,
  overall_json   TEXT NOT NULL,
  results_json   TEXT NOT NULL
);
CREATE TABLE run_samples (
  run_id             INTEGER NOT NULL REFERENCES runs(id),
  problem_id         TEXT NOT NULL,
  level              TEXT NOT NULL,
  problem            TEXT NOT NULL,
  sample_index       INTEGER NOT NULL,
  sample_path        TEXT NOT NULL,
  verdict_key        TEXT NOT NULL,
  problem_hash       TEXT NOT NULL,
  candidate_hash     TEXT NOT NULL,
  status             TEXT NOT NULL,
  reward             REAL,
  speedup_vs_eager   REAL,
  speedup_vs_compile REAL,
  candidate_ms       REAL,
  from_store         INTEGER NOT NULL
);
CREATE INDEX run_samples_by_run ON run_samples(run_id, problem_id, sample_index);
-- Covers the problems list (one scan, no table look-ups: 7 ms for 10,000 samples where
-- reading the rows took 30) and finds one problem's samples for its leaderboard.
CREATE INDEX run_samples_by_problem
  ON run_samples(problem_id, run_id, status, speedup_vs_eager, level, problem);
CREATE TABLE texts (
  hash TEXT PRIMARY KEY,
  text TEXT NOT NULL
);
)sql",
    // 4: the lower ends of the samples' speedup intervals (verdict format 8), so the web UI's
    // Faster Rate and fast_p count what bench's report counted.
    R"sql(
ALTER TABLE run_samples ADD COLUMN speedup_vs_eager_lo REAL;
ALTER TABLE run_samples ADD COLUMN speedup_vs_compile_lo REAL;
)sql",
};
static_assert(std::size(kMigrations) == Store::kSchemaVersion);

// The same code with `where` (which file) in front of the message.
Status WithContext(const Status& s, const std::string& where) {
  std::string msg = where + ": " + s.message();
  switch (s.code()) {
    case Code::kOk:
      return s;
    case Code::kInvalidArgument:
      return Status::Invalid(msg);
    case Code::kNotFound:
      return Status::NotFound(msg);
    case Code::kIoError:
      return Status::IoError(msg);
    case Code::kTimeout:
      return Status::Timeout(msg);
    case Code::kUnavailable:
      return Status::Unavailable(msg);
    case Code::kInternal:
      return Status::Internal(msg);
  }
  return Status::Internal(msg);
}

Result<bool> HasTable(Connection& db, const char* name) {
  auto q = db.Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  if (!q.ok()) {
    return q.status();
  }
  if (Status s = (*q)->Bind(1, std::string_view(name)); !s.ok()) {
    return s;
  }
  return (*q)->Step();
}

// Before the web UI was merged, its branch numbered its bench runs schema 2, the number the
// replay table has. Such a file (runs at 2, no replay table) has migration 3's tables already
// and lacks 2's: it gets 2's and is then at 3.
Result<int64_t> FromTheWebsSchema2(Connection& db, int64_t version) {
  if (version != 2) {
    return version;
  }
  auto runs = HasTable(db, "runs");
  if (!runs.ok()) {
    return runs.status();
  }
  auto replay = HasTable(db, "replay");
  if (!replay.ok()) {
    return replay.status();
  }
  if (!*runs || *replay) {
    return version;
  }
  if (Status s = db.Exec(kMigrations[1], "add the replay table to a store of the web's schema 2");
      !s.ok()) {
    return s;
  }
  return 3;
}

// Brings the schema to kSchemaVersion; run in one write transaction, so two processes opening a
// new file at once cannot both run a migration.
Status MigrateLocked(Connection& db) {
  Status s = db.Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
                     "create schema_version");
  if (!s.ok()) {
    return s;
  }
  auto q = db.Prepare("SELECT MAX(version) FROM schema_version");
  if (!q.ok()) {
    return q.status();
  }
  auto row = (*q)->Step();
  if (!row.ok()) {
    return row.status();
  }
  const int64_t found = (*q)->Int(0);  // NULL (empty table) reads as 0
  if (found > Store::kSchemaVersion) {
    return Status::Invalid("database schema version " + std::to_string(found) +
                           " is newer than this kforge supports (" +
                           std::to_string(Store::kSchemaVersion) + ")");
  }
  auto version = FromTheWebsSchema2(db, found);
  if (!version.ok()) {
    return version.status();
  }
  for (int64_t v = *version; v < Store::kSchemaVersion; ++v) {
    s = db.Exec(kMigrations[v], "migrate schema to version " + std::to_string(v + 1));
    if (!s.ok()) {
      return s;
    }
  }
  if (found == Store::kSchemaVersion) {
    return Status::Ok();
  }
  s = db.Exec("DELETE FROM schema_version", "update schema_version");
  if (!s.ok()) {
    return s;
  }
  auto ins = db.Prepare("INSERT INTO schema_version(version) VALUES (?)");
  if (!ins.ok()) {
    return ins.status();
  }
  if (s = (*ins)->Bind(1, int64_t{Store::kSchemaVersion}); !s.ok()) {
    return s;
  }
  return (*ins)->Step().status();
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const std::filesystem::path& path) {
  const std::string where = "store " + path.string();
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return Status::IoError(where + ": cannot create folder: " + ec.message());
    }
  }
  sqlite3* raw = nullptr;
  // NOMUTEX: our own mutex serialises the connection, SQLite's would be a second lock.
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  auto db = std::make_unique<Connection>(raw);  // closes raw even when the open failed
  if (rc != SQLITE_OK) {
    return FromSqlite(rc, where + ": cannot open: " + (raw ? sqlite3_errmsg(raw) : "no memory"));
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  auto set_up = [&]() -> Status {
    // The first statement reads the file header, so a non-database file fails here.
    if (Status s = db->Exec("PRAGMA journal_mode=WAL", where); !s.ok()) {
      return s;
    }
    // NORMAL is durable across application crashes in WAL mode; a power loss may drop the
    // last few commits, which for a cache of recomputable results is the right trade for speed.
    if (Status s = db->Exec("PRAGMA synchronous=NORMAL", where); !s.ok()) {
      return s;
    }
    if (Status s = db->InTransaction("migration", [&] { return MigrateLocked(*db); }); !s.ok()) {
      return WithContext(s, where);
    }
    return Status::Ok();
  };
  // While another process creates the same store (its switch to WAL, its schema), SQLite
  // answers "database is locked" at once rather than through the busy handler (the change of
  // journal mode and the new file's first transaction do not wait): the set-up is tried again
  // for up to kBusyTimeoutMs, as any busy statement would wait.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  std::minstd_rand jitter(static_cast<unsigned>(getpid()));
  Status s = set_up();
  for (int attempt = 0; s.code() == Code::kTimeout &&
                        std::chrono::steady_clock::now() < deadline;
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + jitter() % (10 + 5 * std::min(attempt, 8))));
    s = set_up();
  }
  if (!s.ok()) {
    return s;
  }
  return std::unique_ptr<Store>(new Store(std::move(db)));
}

Store::Store(std::unique_ptr<Connection> db) : db_(std::move(db)) {}
Store::~Store() = default;

Result<std::optional<json>> Store::GetBaseline(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare("SELECT value_json FROM baselines WHERE key = ?");
  if (!q.ok()) {
    return q.status();
  }
  if (Status s = (*q)->Bind(1, key); !s.ok()) {
    return s;
  }
  auto row = (*q)->Step();
  if (!row.ok()) {
    return row.status();
  }
  if (!*row) {
    return std::optional<json>();
  }
  json j = json::parse((*q)->Text(0), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Internal("baseline '" + key + "' is not valid JSON");
  }
  return std::optional<json>(std::move(j));
}

Status Store::PutBaseline(const std::string& key, const json& value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare(
      "INSERT INTO baselines(key, value_json, updated_at_ms) VALUES (?, ?, ?) "
      "ON CONFLICT(key) DO UPDATE SET value_json = excluded.value_json, "
      "updated_at_ms = excluded.updated_at_ms");
  if (!q.ok()) {
    return q.status();
  }
  Statement& st = **q;
  for (Status s : {st.Bind(1, key), st.Bind(2, Dump(value)), st.Bind(3, NowMs())}) {
    if (!s.ok()) {
      return s;
    }
  }
  return st.Step().status();
}

Result<std::optional<Verdict>> Store::GetVerdict(const std::string& job_key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare("SELECT verdict_json FROM verdicts WHERE job_key = ?");
  if (!q.ok()) {
    return q.status();
  }
  if (Status s = (*q)->Bind(1, job_key); !s.ok()) {
    return s;
  }
  auto row = (*q)->Step();
  if (!row.ok()) {
    return row.status();
  }
  if (!*row) {
    return std::optional<Verdict>();
  }
  json j = json::parse((*q)->Text(0), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Internal("verdict '" + job_key + "' is not valid JSON");
  }
  // A verdict written under another schema is a stale cache entry, not an error: the caller
  // re-evaluates and overwrites it.
  auto schema = j.find("schema");
  if (schema == j.end() || *schema != kVerdictSchema) {
    return std::optional<Verdict>();
  }
  Verdict v;
  std::string error;
  if (!VerdictFromJson(j, &v, &error)) {
    return Status::Internal("verdict '" + job_key + "' is malformed: " + error);
  }
  return std::optional<Verdict>(std::move(v));
}

Status Store::PutVerdict(const std::string& job_key, const Verdict& v) {
  const std::string text = Dump(ToJson(v));  // outside the lock: it can be large
  const int64_t now_ms = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare(
      "INSERT INTO verdicts(job_key, problem_hash, candidate_hash, status, reward, "
      "created_at_ms, updated_at_ms, verdict_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT(job_key) DO UPDATE SET problem_hash = excluded.problem_hash, "
      "candidate_hash = excluded.candidate_hash, status = excluded.status, "
      "reward = excluded.reward, updated_at_ms = excluded.updated_at_ms, "
      "verdict_json = excluded.verdict_json");
  if (!q.ok()) {
    return q.status();
  }
  Statement& st = **q;
  for (Status s : {st.Bind(1, job_key), st.Bind(2, v.problem_hash), st.Bind(3, v.candidate_hash),
                   st.Bind(4, StatusName(v.status)), st.Bind(5, v.reward), st.Bind(6, now_ms),
                   st.Bind(7, now_ms), st.Bind(8, text)}) {
    if (!s.ok()) {
      return s;
    }
  }
  return st.Step().status();
}

}  // namespace kf::store
