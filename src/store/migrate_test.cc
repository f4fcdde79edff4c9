// The store's one migration sequence (store.cc's kMigrations): 1 baselines and verdicts, 2 the
// reward service's replay buffer, 3 bench runs and texts. A file written by an earlier kforge,
// at any of those versions (or by the web UI's branch before its merge), opens in place with
// every row kept and ends with the schema a fresh file has. The files of versions 1 and 2 are
// written with the DDL those versions shipped, frozen.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <string>

#include "score/verdict.h"
#include "store/store.h"

namespace kf::store {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Schema 1 as kforge wrote it, and 2 as the groups work added it.
constexpr const char* kVersion1 = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
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
)sql";
constexpr const char* kVersion2 = R"sql(
UPDATE schema_version SET version = 2;
CREATE TABLE replay (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  key           TEXT NOT NULL UNIQUE,
  value_json    TEXT NOT NULL,
  failures      INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);
INSERT INTO replay(key, value_json, failures, created_at_ms, updated_at_ms)
  VALUES ('r1', '{"prompt": "one"}', 2, 10, 20), ('r2', '{"prompt": "two"}', 1, 30, 30);
)sql";

class MigrateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("kf_migrate_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes a file at schema `version` (1 or 2) with a baseline and a verdict in it (and, at 2,
  // two replay entries), as the kforge of that version would have left it.
  void WriteOld(const fs::path& path, int version) {
    Verdict v;
    v.problem_id = "level1/relu";
    v.problem_hash = "ph";
    v.candidate_hash = "ch";
    v.status = VerdictStatus::kOk;
    v.reward = 1.0;
    v.feedback = "Correct.";
    const std::string verdict = ToJson(v).dump();
    std::string sql = kVersion1;
    sql += "INSERT INTO baselines VALUES ('b1', '{\"eager_ms\": 2}', 1);";
    sql += "INSERT INTO verdicts VALUES ('j1', 'ph', 'ch', 'ok', 1.0, 5, 6, '" + verdict + "');";
    if (version >= 2) sql += kVersion2;
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    const std::string detail = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << detail;
  }

  // Every column of every row of one query, one line per row.
  static std::string Rows(const fs::path& path, const std::string& sql) {
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_stmt* st = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) out = "<error>";
    while (st && sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* t = sqlite3_column_text(st, c);
        out += (c ? "|" : "") + std::string(t ? reinterpret_cast<const char*>(t) : "NULL");
      }
      out += "\n";
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }

  // The tables and indexes of a file, as SQLite keeps their definitions.
  static std::string Schema(const fs::path& path) {
    return Rows(path,
                "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
                "ORDER BY type, name");
  }

  std::unique_ptr<Store> MustOpen(const fs::path& path) {
    auto s = Store::Open(path);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  // What every migrated file must still hold and newly be able to do.
  void ExpectOldRowsAndNewTables(const fs::path& path, Store& st) {
    EXPECT_EQ(Rows(path, "SELECT version FROM schema_version"), "4\n");
    auto b = st.GetBaseline("b1");
    ASSERT_TRUE(b.ok() && b->has_value()) << b.status().ToString();
    EXPECT_EQ((**b)["eager_ms"], 2);
    auto v = st.GetVerdict("j1");
    ASSERT_TRUE(v.ok() && v->has_value()) << v.status().ToString();
    EXPECT_EQ((*v)->feedback, "Correct.");
    EXPECT_EQ(Rows(path, "SELECT created_at_ms, updated_at_ms FROM verdicts"), "5|6\n");
    // The run tables are there and empty, and take a run.
    auto runs = st.ListRuns(10);
    ASSERT_TRUE(runs.ok()) << runs.status().ToString();
    EXPECT_TRUE(runs->empty());
    RunRow run;
    run.model = "m";
    run.started_at = "2026-12-02T00:00:00Z";
    RunSampleRow sample;
    sample.problem_id = "level1/relu";
    sample.status = "ok";
    sample.speedup_vs_eager = 1.5;
    sample.speedup_vs_eager_lo = 1.25;  // schema 4: the interval's lower end is kept
    auto id = st.RecordRun(run, {sample});
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    EXPECT_EQ(Rows(path, "SELECT COUNT(*) FROM run_samples"), "1\n");
    EXPECT_EQ(Rows(path, "SELECT speedup_vs_eager_lo FROM run_samples"), "1.25\n");
    ASSERT_TRUE(st.PutTexts({{"h", "text"}}).ok());
  }

  fs::path dir_;
};

TEST_F(MigrateTest, AFreshFileIsCreatedAtTheLatestVersion) {
  const fs::path path = dir_ / "fresh.db";
  ASSERT_TRUE(MustOpen(path));
  EXPECT_EQ(Store::kSchemaVersion, 4);
  EXPECT_EQ(Rows(path, "SELECT version FROM schema_version"), "4\n");
  const std::string schema = Schema(path);
  for (const char* table : {"baselines", "verdicts", "replay", "runs", "run_samples", "texts"}) {
    EXPECT_NE(schema.find(std::string("|") + table + "|"), std::string::npos) << table;
  }
}

TEST_F(MigrateTest, VersionOneGainsReplayAndRunsAndKeepsItsRows) {
  const fs::path path = dir_ / "v1.db";
  WriteOld(path, 1);
  auto st = MustOpen(path);
  ASSERT_TRUE(st);
  ExpectOldRowsAndNewTables(path, *st);
  EXPECT_EQ(*st->CountReplay(), 0);
  EXPECT_TRUE(st->PushReplay("k", json::object(), 3).ok());
  EXPECT_EQ(*st->CountReplay(), 1);
}

TEST_F(MigrateTest, VersionTwoGainsRunsAndKeepsItsReplayBuffer) {
  const fs::path path = dir_ / "v2.db";
  WriteOld(path, 2);
  auto st = MustOpen(path);
  ASSERT_TRUE(st);
  ExpectOldRowsAndNewTables(path, *st);
  // The replay entries keep their order, counts and times; a new one goes behind them.
  ASSERT_TRUE(st->PushReplay("r3", json{{"prompt", "three"}}, 10).ok());
  auto rows = st->TakeReplay(10);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].key, "r1");
  EXPECT_EQ((*rows)[0].value["prompt"], "one");
  EXPECT_EQ((*rows)[0].failures, 2);
  EXPECT_EQ((*rows)[0].created_at_ms, 10);
  EXPECT_EQ((*rows)[0].updated_at_ms, 20);
  EXPECT_EQ((*rows)[1].key, "r2");
  EXPECT_EQ((*rows)[2].key, "r3");
}

// The web UI's branch, before it was merged, wrote its bench runs as schema 2 (the number the
// replay table took on main). Its files, runs and no replay table, gain that table at 3 and
// keep their runs and texts.
TEST_F(MigrateTest, TheWebBranchsSchemaTwoGainsReplayAndKeepsItsRuns) {
  const fs::path path = dir_ / "web2.db";
  {
    auto st = MustOpen(path);
    ASSERT_TRUE(st);
    RunRow run;
    run.model = "before the merge";
    run.started_at = "2026-12-01T00:00:00Z";
    RunSampleRow sample;
    sample.problem_id = "level1/relu";
    sample.status = "ok";
    ASSERT_TRUE(st->RecordRun(run, {sample}).ok());
    ASSERT_TRUE(st->PutTexts({{"h", "kernel"}}).ok());
  }
  // That file: this schema less the replay table (and schema 4's columns), at 2.
  EXPECT_EQ(Rows(path, "DROP TABLE replay"), "");
  EXPECT_EQ(Rows(path, "ALTER TABLE run_samples DROP COLUMN speedup_vs_eager_lo"), "");
  EXPECT_EQ(Rows(path, "ALTER TABLE run_samples DROP COLUMN speedup_vs_compile_lo"), "");
  EXPECT_EQ(Rows(path, "UPDATE schema_version SET version = 2"), "");
  EXPECT_EQ(Rows(path, "SELECT version FROM schema_version"), "2\n");
  ASSERT_TRUE(MustOpen(dir_ / "fresh.db"));
  auto st = MustOpen(path);
  ASSERT_TRUE(st);
  EXPECT_EQ(Rows(path, "SELECT version FROM schema_version"), "4\n");
  EXPECT_EQ(Schema(path), Schema(dir_ / "fresh.db"));
  auto runs = st->ListRuns(10);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].model, "before the merge");
  EXPECT_EQ(Rows(path, "SELECT COUNT(*) FROM run_samples"), "1\n");
  auto text = st->GetText("h");
  ASSERT_TRUE(text.ok() && text->has_value());
  EXPECT_EQ(**text, "kernel");
  EXPECT_TRUE(st->PushReplay("k", json::object(), 3).ok());
  EXPECT_EQ(*st->CountReplay(), 1);
}

// Upgraded files and new ones have one schema, so no code path depends on a file's history.
TEST_F(MigrateTest, AnUpgradedFileHasTheSchemaOfAFreshOne) {
  ASSERT_TRUE(MustOpen(dir_ / "fresh.db"));
  const std::string fresh = Schema(dir_ / "fresh.db");
  for (int version : {1, 2}) {
    const fs::path path = dir_ / ("v" + std::to_string(version) + ".db");
    WriteOld(path, version);
    ASSERT_TRUE(MustOpen(path));
    EXPECT_EQ(Schema(path), fresh) << "from version " << version;
  }
}

// Opening an upgraded file again changes nothing and keeps its rows.
TEST_F(MigrateTest, ReopeningAnUpgradedFileIsANoOp) {
  const fs::path path = dir_ / "v2.db";
  WriteOld(path, 2);
  ASSERT_TRUE(MustOpen(path));
  const std::string schema = Schema(path);
  auto st = MustOpen(path);
  ASSERT_TRUE(st);
  EXPECT_EQ(Schema(path), schema);
  EXPECT_EQ(Rows(path, "SELECT version FROM schema_version"), "4\n");
  EXPECT_EQ(*st->CountReplay(), 2);
}

}  // namespace
}  // namespace kf::store
