// sqlite: RAII owners of SQLite's connection and statements, and SQLite's result codes as a
// kf::Status. Internal to src/store (store.cc, runs.cc, replay.cc); nothing outside includes it.
//
// Thread-safety: none; the Store's mutex serialises all use of one Connection.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace kf::store {

// SQLite result codes mapped to our fixed set, so callers can tell "bad file" from "busy".
inline Status FromSqlite(int rc, const std::string& what) {
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

// Candidate text (compiler output, excerpts) may hold invalid UTF-8; replace rather than throw.
inline std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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

  // Ready to be run again with new bindings.
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
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
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::optional<double> OptDouble(int col) const {
    return IsNull(col) ? std::nullopt : std::optional<double>(Double(col));
  }

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

  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t Changes() const { return sqlite3_changes(db_); }
  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }

  // Runs f() (returning Status) inside BEGIN IMMEDIATE ... COMMIT, rolled back when it fails:
  // one writer at a time across processes, and all of f's writes or none.
  template <class F>
  Status InTransaction(const std::string& what, F&& f) {
    if (Status s = Exec("BEGIN IMMEDIATE", "begin " + what); !s.ok()) {
      return s;
    }
    Status s = f();
    if (!s.ok()) {
      Exec("ROLLBACK", "rollback " + what);
      return s;
    }
    return Exec("COMMIT", "commit " + what);
  }

 private:
  sqlite3* db_;
};

}  // namespace kf::store
