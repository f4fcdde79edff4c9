// store: the embedded SQLite database of baselines, verdicts, bench runs and the reward
// service's replay buffer (one file, by default under ~/.cache/kforge), and the source texts
// the runs refer to (by SHA-256). SQLite's C API stays inside src/store (sqlite.h); every SQLite
// error comes out as a kf::Status and no exception crosses this interface.
//
// Thread-safety: a Store may be shared by any number of threads; one mutex serialises use of
// its single connection. Several processes may open the same file: WAL mode lets readers run
// beside one writer, and a busy writer is waited for up to kBusyTimeoutMs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "score/verdict.h"

namespace kf::store {

class Connection;  // RAII owner of the sqlite3 handle, sqlite.h

// A `kforge bench` run as the store keeps it: what the web UI lists and compares.
struct RunRow {
  int64_t id = 0;              // assigned by RecordRun (1, 2, ...)
  std::string model;           // bench --model; by default the samples folder's name
  std::string started_at;      // UTC, ISO 8601
  int64_t recorded_at_ms = 0;  // set by RecordRun
  std::string backend, device, policy;
  int k = 1;               // of Pass@k and Avg@k
  int64_t samples = 0;     // set by RecordRun: how many samples it is given
  nlohmann::json overall;  // the overall metrics (results.json's "overall"): small
  nlohmann::json results;  // all of results.json; filled by GetRun only
};

// One sample of a run: where it came from, the key of its verdict, and the verdict's numbers
// as columns (so listing, comparing and ranking never parse verdict JSON).
struct RunSampleRow {
  int64_t run_id = 0;
  std::string problem_id;  // "level1/relu": level + "/" + problem
  std::string level, problem;
  int index = 0;
  std::string sample_path;  // as given to bench; shown, never opened by the store or the UI
  std::string verdict_key;  // the verdicts table's job_key; "" when none was stored
  std::string problem_hash, candidate_hash;
  std::string status;  // StatusName
  std::optional<double> reward, speedup_vs_eager, speedup_vs_compile, candidate_ms;
  // The lower ends of the speedups' 95% intervals; absent before verdict format 8.
  std::optional<double> speedup_vs_eager_lo, speedup_vs_compile_lo;
  bool from_store = false;
  std::string model;  // the run's, filled by ProblemSamples
};

// What the runs say about one problem.
struct ProblemRow {
  std::string problem_id, level, problem;
  int64_t runs = 0, samples = 0, correct = 0;
  std::optional<double> best_speedup_vs_eager;  // over its ok samples
};

class Store {
 public:
  // Waiting this long for another writer covers a slow disk and a big transaction, yet a
  // stuck process still surfaces as an error rather than a hang.
  static constexpr int kBusyTimeoutMs = 10'000;
  // Bumped with each schema change; Open migrates older files step by step and refuses newer.
  static constexpr int kSchemaVersion = 4;

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

  // Runs (runs.cc). RecordRun writes the run and its samples in one transaction and returns
  // the run's id; put the texts its samples refer to first (PutTexts).
  Result<int64_t> RecordRun(const RunRow& run, const std::vector<RunSampleRow>& samples);
  Result<std::vector<RunRow>> ListRuns(int limit);  // newest first, without `results`
  Result<std::optional<RunRow>> GetRun(int64_t id);
  Result<std::vector<RunSampleRow>> RunSamples(int64_t run_id);  // by problem, then index
  Result<std::vector<ProblemRow>> ListProblems();                // by problem id
  // A problem's samples across runs, best first: ok before the rest, then by speedup vs eager
  // (unknown last), newest run first; at most `limit`.
  Result<std::vector<RunSampleRow>> ProblemSamples(const std::string& problem_id, int limit);
  // Source texts (candidates, problems) by SHA-256 hex, in one transaction. Kept once: a
  // second put of a hash changes nothing.
  Status PutTexts(const std::map<std::string, std::string>& by_hash);
  Result<std::optional<std::string>> GetText(const std::string& hash);

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
