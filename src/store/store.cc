#include "store/store.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <system_error>
#include <utility>

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
};
static_assert(std::size(kMigrations) == Store::kSchemaVersion);

// SQLite result codes mapped to our fixed set, so callers can tell "bad file" from "busy".
Status FromSqlite(int rc, const std::string& what) {
  std::string msg = what + " (sqlite: " + sqlite3_errstr(rc) + ")";
  switch (rc & 0xff) {  // the primary code; extended codes carry it in the low byte
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return Status::Invalid(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Timeout(msg);
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return Status::IoError(msg);
    default:
      return Status::Internal(msg);
  }
}

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

int64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// Candidate text (compiler output, excerpts) may hold invalid UTF-8; replace rather than throw.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

// RAII owner of one prepared statement. Binding indices are 1-based as in SQLite.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Status Bind(int i, std::string_view text) {
    return Check(
        sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
  }
  Status Bind(int i, int64_t x) { return Check(sqlite3_bind_int64(stmt_, i, x)); }
  Status Bind(int i, std::optional<double> x) {
    return Check(x ? sqlite3_bind_double(stmt_, i, *x) : sqlite3_bind_null(stmt_, i));
  }

  // True when a row is ready, false when the statement is done.
  Result<bool> Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) {
      return true;
    }
    if (rc == SQLITE_DONE) {
      return false;
    }
    return FromSqlite(rc, sqlite3_errmsg(db_));
  }

  std::string Text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, sqlite3_column_bytes(stmt_, col)) : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  Status Check(int rc) {
    return rc == SQLITE_OK ? Status::Ok() : FromSqlite(rc, sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// RAII owner of the sqlite3 connection.
class Connection {
 public:
  explicit Connection(sqlite3* db) : db_(db) {}
  ~Connection() { sqlite3_close_v2(db_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Status Exec(const char* sql, const std::string& what) {
    char* err = nullptr;
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
    std::string detail = err ? err : "";
    sqlite3_free(err);
    if (rc == SQLITE_OK) {
      return Status::Ok();
    }
    return FromSqlite(rc, what + ": " + detail);
  }

  Result<std::unique_ptr<Statement>> Prepare(const char* sql) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return FromSqlite(rc, std::string("prepare: ") + sqlite3_errmsg(db_));
    }
    return std::make_unique<Statement>(db_, stmt);
  }

  // Brings the schema to kSchemaVersion in one write transaction, so two processes opening a
  // new file at once cannot both run a migration.
  Status Migrate() {
    if (Status s = Exec("BEGIN IMMEDIATE", "begin migration"); !s.ok()) {
      return s;
    }
    Status s = MigrateLocked();
    if (!s.ok()) {
      Exec("ROLLBACK", "rollback migration");
      return s;
    }
    return Exec("COMMIT", "commit migration");
  }

 private:
  Status MigrateLocked() {
    Status s = Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
                    "create schema_version");
    if (!s.ok()) {
      return s;
    }
    auto q = Prepare("SELECT MAX(version) FROM schema_version");
    if (!q.ok()) {
      return q.status();
    }
    auto row = (*q)->Step();
    if (!row.ok()) {
      return row.status();
    }
    const int64_t version = (*q)->Int(0);  // NULL (empty table) reads as 0
    if (version > Store::kSchemaVersion) {
      return Status::Invalid("database schema version " + std::to_string(version) +
                             " is newer than this kforge supports (" +
                             std::to_string(Store::kSchemaVersion) + ")");
    }
    for (int64_t v = version; v < Store::kSchemaVersion; ++v) {
      s = Exec(kMigrations[v], "migrate schema to version " + std::to_string(v + 1));
      if (!s.ok()) {
        return s;
      }
    }
    if (version == Store::kSchemaVersion) {
      return Status::Ok();
    }
    s = Exec("DELETE FROM schema_version", "update schema_version");
    if (!s.ok()) {
      return s;
    }
    auto ins = Prepare("INSERT INTO schema_version(version) VALUES (?)");
    if (!ins.ok()) {
      return ins.status();
    }
    if (s = (*ins)->Bind(1, int64_t{Store::kSchemaVersion}); !s.ok()) {
      return s;
    }
    return (*ins)->Step().status();
  }

  sqlite3* db_;
};

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
  // The first statement reads the file header, so a non-database file fails here.
  if (Status s = db->Exec("PRAGMA journal_mode=WAL", where); !s.ok()) {
    return s;
  }
  // NORMAL is durable across application crashes in WAL mode; a power loss may drop the last
  // few commits, which for a cache of recomputable results is the right trade for speed.
  if (Status s = db->Exec("PRAGMA synchronous=NORMAL", where); !s.ok()) {
    return s;
  }
  if (Status s = db->Migrate(); !s.ok()) {
    return WithContext(s, where);
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
