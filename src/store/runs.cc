// The store's bench runs and source texts (store.h): what `kforge bench` records and the web UI
// reads. Numbers the UI sorts by are columns; JSON is parsed only for one run's results.
#include "store/sqlite.h"
#include "store/store.h"

namespace kf::store {
namespace {

using nlohmann::json;

// Binds a list of values in order; the first failure is returned.
template <class... V>
Status BindAll(Statement& st, const V&... v) {
  int i = 0;
  Status out;
  auto one = [&](const auto& x) {
    ++i;
    if (out.ok()) out = st.Bind(i, x);
  };
  (one(v), ...);
  return out;
}

json ParseOr(const std::string& text, json fallback) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

constexpr const char* kSampleColumns =
    "s.run_id, s.problem_id, s.level, s.problem, s.sample_index, s.sample_path, s.verdict_key, "
    "s.problem_hash, s.candidate_hash, s.status, s.reward, s.speedup_vs_eager, "
    "s.speedup_vs_compile, s.candidate_ms, s.from_store, s.speedup_vs_eager_lo, "
    "s.speedup_vs_compile_lo";

RunSampleRow SampleFrom(const Statement& q) {
  RunSampleRow r;
  r.run_id = q.Int(0);
  r.problem_id = q.Text(1);
  r.level = q.Text(2);
  r.problem = q.Text(3);
  r.index = static_cast<int>(q.Int(4));
  r.sample_path = q.Text(5);
  r.verdict_key = q.Text(6);
  r.problem_hash = q.Text(7);
  r.candidate_hash = q.Text(8);
  r.status = q.Text(9);
  r.reward = q.OptDouble(10);
  r.speedup_vs_eager = q.OptDouble(11);
  r.speedup_vs_compile = q.OptDouble(12);
  r.candidate_ms = q.OptDouble(13);
  r.from_store = q.Int(14) != 0;
  r.speedup_vs_eager_lo = q.OptDouble(15);
  r.speedup_vs_compile_lo = q.OptDouble(16);
  return r;
}

RunRow RunFrom(const Statement& q, bool with_results) {
  RunRow r;
  r.id = q.Int(0);
  r.model = q.Text(1);
  r.started_at = q.Text(2);
  r.recorded_at_ms = q.Int(3);
  r.backend = q.Text(4);
  r.device = q.Text(5);
  r.policy = q.Text(6);
  r.k = static_cast<int>(q.Int(7));
  r.samples = q.Int(8);
  r.overall = ParseOr(q.Text(9), json::object());
  if (with_results) r.results = ParseOr(q.Text(10), json::object());
  return r;
}

// Runs `q` to the end, turning each row into a T.
template <class T, class F>
Result<std::vector<T>> Rows(Statement& q, F&& from) {
  std::vector<T> out;
  while (true) {
    auto row = q.Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(from(q));
  }
}

Status InsertText(Connection& db, const std::string& hash, const std::string& text) {
  auto q = db.Prepare("INSERT INTO texts(hash, text) VALUES (?, ?) ON CONFLICT(hash) DO NOTHING");
  if (!q.ok()) return q.status();
  if (Status s = BindAll(**q, hash, text); !s.ok()) return s;
  return (*q)->Step().status();
}

Result<int64_t> InsertRun(Connection& db, const RunRow& run,
                          const std::vector<RunSampleRow>& samples) {
  auto q = db.Prepare(
      "INSERT INTO runs(model, started_at, recorded_at_ms, backend, device, policy, k, samples, "
      "overall_json, results_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!q.ok()) return q.status();
  if (Status s = BindAll(**q, run.model, run.started_at, NowMs(), run.backend, run.device,
                         run.policy, int64_t{run.k}, static_cast<int64_t>(samples.size()),
                         Dump(run.overall), Dump(run.results));
      !s.ok()) {
    return s;
  }
  if (auto s = (*q)->Step(); !s.ok()) return s.status();
  const int64_t id = db.LastInsertId();
  auto ins = db.Prepare(
      "INSERT INTO run_samples(run_id, problem_id, level, problem, sample_index, sample_path, "
      "verdict_key, problem_hash, candidate_hash, status, reward, speedup_vs_eager, "
      "speedup_vs_compile, candidate_ms, from_store, speedup_vs_eager_lo, speedup_vs_compile_lo) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!ins.ok()) return ins.status();
  for (const RunSampleRow& r : samples) {
    Statement& st = **ins;
    st.Reset();
    if (Status s = BindAll(st, id, r.problem_id, r.level, r.problem, int64_t{r.index},
                           r.sample_path, r.verdict_key, r.problem_hash, r.candidate_hash, r.status,
                           r.reward, r.speedup_vs_eager, r.speedup_vs_compile, r.candidate_ms,
                           int64_t{r.from_store ? 1 : 0}, r.speedup_vs_eager_lo,
                           r.speedup_vs_compile_lo);
        !s.ok()) {
      return s;
    }
    if (auto s = st.Step(); !s.ok()) return s.status();
  }
  return id;
}

}  // namespace

Result<int64_t> Store::RecordRun(const RunRow& run, const std::vector<RunSampleRow>& samples) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t id = 0;
  Status s = db_->InTransaction("run", [&]() -> Status {
    auto inserted = InsertRun(*db_, run, samples);
    if (!inserted.ok()) return inserted.status();
    id = *inserted;
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return id;
}

Result<std::vector<RunRow>> Store::ListRuns(int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare(
      "SELECT id, model, started_at, recorded_at_ms, backend, device, policy, k, samples, "
      "overall_json, '' FROM runs ORDER BY id DESC LIMIT ?");
  if (!q.ok()) return q.status();
  if (Status s = (*q)->Bind(1, int64_t{limit}); !s.ok()) return s;
  return Rows<RunRow>(**q, [](const Statement& st) { return RunFrom(st, false); });
}

Result<std::optional<RunRow>> Store::GetRun(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare(
      "SELECT id, model, started_at, recorded_at_ms, backend, device, policy, k, samples, "
      "overall_json, results_json FROM runs WHERE id = ?");
  if (!q.ok()) return q.status();
  if (Status s = (*q)->Bind(1, id); !s.ok()) return s;
  auto rows = Rows<RunRow>(**q, [](const Statement& st) { return RunFrom(st, true); });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<RunRow>();
  return std::optional<RunRow>(std::move(rows->front()));
}

Result<std::vector<RunSampleRow>> Store::RunSamples(int64_t run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string sql = std::string("SELECT ") + kSampleColumns +
                          " FROM run_samples s WHERE s.run_id = ? "
                          "ORDER BY s.problem_id, s.sample_index";
  auto q = db_->Prepare(sql.c_str());
  if (!q.ok()) return q.status();
  if (Status s = (*q)->Bind(1, run_id); !s.ok()) return s;
  return Rows<RunSampleRow>(**q, SampleFrom);
}

Result<std::vector<ProblemRow>> Store::ListProblems() {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare(
      "SELECT problem_id, MIN(level), MIN(problem), COUNT(DISTINCT run_id), COUNT(*), "
      "SUM(status = 'ok'), MAX(CASE WHEN status = 'ok' THEN speedup_vs_eager END) "
      "FROM run_samples GROUP BY problem_id ORDER BY problem_id");
  if (!q.ok()) return q.status();
  return Rows<ProblemRow>(**q, [](const Statement& st) {
    ProblemRow p;
    p.problem_id = st.Text(0);
    p.level = st.Text(1);
    p.problem = st.Text(2);
    p.runs = st.Int(3);
    p.samples = st.Int(4);
    p.correct = st.Int(5);
    p.best_speedup_vs_eager = st.OptDouble(6);
    return p;
  });
}

Result<std::vector<RunSampleRow>> Store::ProblemSamples(const std::string& problem_id, int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string sql = std::string("SELECT ") + kSampleColumns +
                          ", r.model FROM run_samples s JOIN runs r ON r.id = s.run_id "
                          "WHERE s.problem_id = ? ORDER BY (s.status = 'ok') DESC, "
                          "s.speedup_vs_eager DESC NULLS LAST, s.run_id DESC, s.sample_index "
                          "LIMIT ?";
  auto q = db_->Prepare(sql.c_str());
  if (!q.ok()) return q.status();
  if (Status s = BindAll(**q, problem_id, int64_t{limit}); !s.ok()) return s;
  return Rows<RunSampleRow>(**q, [](const Statement& st) {
    RunSampleRow r = SampleFrom(st);
    r.model = st.Text(17);  // after kSampleColumns
    return r;
  });
}

Status Store::PutTexts(const std::map<std::string, std::string>& by_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  return db_->InTransaction("texts", [&]() -> Status {
    for (const auto& [hash, text] : by_hash) {
      if (Status s = InsertText(*db_, hash, text); !s.ok()) return s;
    }
    return Status::Ok();
  });
}

Result<std::optional<std::string>> Store::GetText(const std::string& hash) {
  std::lock_guard<std::mutex> lock(mu_);
  auto q = db_->Prepare("SELECT text FROM texts WHERE hash = ?");
  if (!q.ok()) return q.status();
  if (Status s = (*q)->Bind(1, hash); !s.ok()) return s;
  auto rows = Rows<std::string>(**q, [](const Statement& st) { return st.Text(0); });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<std::string>();
  return std::optional<std::string>(std::move(rows->front()));
}

}  // namespace kf::store
