#include "bench/report.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace kf::bench {
namespace fs = std::filesystem;
using json = nlohmann::json;
namespace {

std::string Fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string PLabel(double p) {
  std::string s = Fixed(p, 1);
  if (s.size() > 2 && s.substr(s.size() - 2) == ".0") s.resize(s.size() - 2);
  return s;
}

json Opt(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

json AggregateJson(const Aggregate& a) {
  json fast = json::object();
  for (const auto& [p, v] : a.fast_p) fast["fast_" + PLabel(p)] = v;
  return {{"problems", a.problems},
          {"samples", a.samples},
          {"correct", a.correct},
          {"infra_errors", a.infra_errors},
          {"pass_at_k", a.pass_at_k},
          {"pass_at_1", a.pass_at_1},
          {"avg_at_k", a.avg_at_k},
          {"faster_rate_vs_eager", a.faster_rate_vs_eager},
          {"faster_rate_vs_compile", Opt(a.faster_rate_vs_compile)},
          {"fast_p", fast},
          {"geomean_speedup_vs_eager", Opt(a.geomean_speedup_vs_eager)},
          {"geomean_speedup_vs_compile", Opt(a.geomean_speedup_vs_compile)},
          {"status_counts", a.status_counts}};
}

const char* kStatuses[] = {"ok",      "incorrect", "compile_error", "runtime_error",
                           "timeout", "cheat",     "format_error",  "infra_error"};

}  // namespace

std::string Percent(double fraction) { return Fixed(100.0 * fraction, 1) + "%"; }
std::string Times(std::optional<double> x) { return x ? Fixed(*x, 2) + "x" : "n/a"; }

Table SummaryTable(const Metrics& m) {
  Table t;
  std::vector<const Aggregate*> groups = {&m.overall};
  t.columns.push_back("overall");
  for (const auto& [level, a] : m.per_level) {
    t.columns.push_back(level);
    groups.push_back(&a);
  }
  // A run of more than one kernel family (load_inline and Triton candidates together): a
  // column each.
  if (m.per_family.size() > 1) {
    for (const auto& [family, a] : m.per_family) {
      t.columns.push_back(family);
      groups.push_back(&a);
    }
  }
  auto row = [&](const std::string& name, auto cell) {
    std::vector<std::string> cells;
    for (const Aggregate* a : groups) cells.push_back(cell(*a));
    t.rows.emplace_back(name, std::move(cells));
  };
  std::string k = std::to_string(m.options.k);
  std::string thr = Fixed(m.options.faster_threshold, 1);
  row("problems", [](const Aggregate& a) { return std::to_string(a.problems); });
  row("samples", [](const Aggregate& a) { return std::to_string(a.samples); });
  row("pass@1", [](const Aggregate& a) { return Percent(a.pass_at_1); });
  if (m.options.k != 1) row("pass@" + k, [](const Aggregate& a) { return Percent(a.pass_at_k); });
  row("avg@" + k, [](const Aggregate& a) { return Percent(a.avg_at_k); });
  row("faster>" + thr + "x vs eager",
      [](const Aggregate& a) { return Percent(a.faster_rate_vs_eager); });
  row("faster>" + thr + "x vs compile", [](const Aggregate& a) {
    return a.faster_rate_vs_compile ? Percent(*a.faster_rate_vs_compile) : std::string("n/a");
  });
  for (size_t i = 0; i < m.options.fast_p.size(); ++i) {
    row("fast_" + PLabel(m.options.fast_p[i]), [i](const Aggregate& a) {
      return i < a.fast_p.size() ? Percent(a.fast_p[i].second) : std::string("n/a");
    });
  }
  row("geomean speedup vs eager",
      [](const Aggregate& a) { return Times(a.geomean_speedup_vs_eager); });
  row("geomean speedup vs compile",
      [](const Aggregate& a) { return Times(a.geomean_speedup_vs_compile); });
  for (const char* s : kStatuses) {
    row(s, [s](const Aggregate& a) {
      auto it = a.status_counts.find(s);
      return std::to_string(it == a.status_counts.end() ? 0 : it->second);
    });
  }
  return t;
}

std::string RenderText(const Table& t) {
  size_t w0 = 0;
  for (const auto& r : t.rows) w0 = std::max(w0, r.first.size());
  std::vector<size_t> w;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    size_t x = t.columns[c].size();
    for (const auto& r : t.rows) x = std::max(x, r.second[c].size());
    w.push_back(x);
  }
  std::ostringstream o;
  auto line = [&](const std::string& first, const std::vector<std::string>& cells) {
    o << first << std::string(w0 - first.size(), ' ');
    for (size_t c = 0; c < cells.size(); ++c)
      o << "  " << std::string(w[c] - cells[c].size(), ' ') << cells[c];
    o << "\n";
  };
  line("", t.columns);
  for (const auto& r : t.rows) line(r.first, r.second);
  return o.str();
}

std::string RenderMarkdown(const Metrics& m, const RunInfo& info) {
  std::ostringstream o;
  o << "# kforge bench report\n\n";
  o << "- started: " << info.started_at << (info.model.empty() ? "" : "\n- model: " + info.model)
    << "\n- backend: " << info.backend << (info.device.empty() ? "" : " (" + info.device + ")")
    << ", policy: " << info.policy << ", lanes: " << info.lanes
    << (info.sequential ? " (sequential mode)" : "") << "\n";
  o << "- samples: " << info.samples << " (evaluated now: " << info.evaluated
    << ", reused from the store: " << info.reused << ", identical to another: " << info.deduplicated
    << (info.retried ? ", timed again after load spoiled the timing: " + std::to_string(info.retried) : "")
    << ")\n- wall time: " << Fixed(info.wall_ms / 1000, 1) << " s\n";
  if (!info.stopped.empty()) {
    o << "- **stopped early** (" << info.stopped << "): " << info.not_evaluated
      << " samples not evaluated; the same command again evaluates them (the rest is stored)\n";
  }
  if (!info.baselines) o << "- baselines off (`--no-baselines`): no speedups\n";
  o << "\nPass@k uses k' = min(k, n) per problem; infra_error samples are not counted. "
       "Definitions: docs/CLI.md.\n\n";
  Table t = SummaryTable(m);
  o << "| metric |";
  for (const auto& c : t.columns) o << " " << c << " |";
  o << "\n|---|";
  for (size_t i = 0; i < t.columns.size(); ++i) o << "---:|";
  o << "\n";
  for (const auto& [name, cells] : t.rows) {
    o << "| " << name << " |";
    for (const auto& c : cells) o << " " << c << " |";
    o << "\n";
  }
  o << "\n## Problems\n\n| level | problem | n | correct | pass@" << m.options.k
    << " | avg | best speedup | statuses |\n|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& p : m.problems) {
    std::string st;
    for (const auto& [s, n] : p.status_counts)
      st += (st.empty() ? "" : ", ") + s + " " + std::to_string(n);
    o << "| " << p.level << " | " << p.problem << " | " << p.n << " | " << p.c << " | "
      << Percent(p.pass_at_k) << " | " << Percent(p.avg_at_k) << " | "
      << Times(p.best_speedup_vs_eager) << " | " << st << " |\n";
  }
  if (!info.warnings.empty()) {
    o << "\n## Warnings\n\n";
    for (const auto& w : info.warnings) o << "- " << w << "\n";
  }
  return o.str();
}

json ResultsJson(const Metrics& m, const RunInfo& info) {
  json levels = json::object();
  for (const auto& [level, a] : m.per_level) levels[level] = AggregateJson(a);
  json families = json::object();
  for (const auto& [family, a] : m.per_family) families[family] = AggregateJson(a);
  json problems = json::array();
  for (const auto& p : m.problems) {
    problems.push_back({{"level", p.level},
                        {"problem", p.problem},
                        {"n", p.n},
                        {"correct", p.c},
                        {"k_used", p.k_used},
                        {"pass_at_k", p.pass_at_k},
                        {"pass_at_1", p.pass_at_1},
                        {"avg_at_k", p.avg_at_k},
                        {"best_speedup_vs_eager", Opt(p.best_speedup_vs_eager)},
                        {"geomean_speedup_vs_eager", Opt(p.geomean_speedup_vs_eager)},
                        {"status_counts", p.status_counts}});
  }
  return {{"schema", 1},
          {"k", m.options.k},
          {"faster_threshold", m.options.faster_threshold},
          {"run",
           {{"started_at", info.started_at},
            {"model", info.model},
            {"backend", info.backend},
            {"policy", info.policy},
            {"device", info.device},
            {"problem_roots", info.problem_roots},
            {"samples_root", info.samples_root},
            {"lanes", info.lanes},
            {"build_threads", info.build_threads},
            {"sequential", info.sequential},
            {"baselines", info.baselines},
            {"samples", info.samples},
            {"evaluated", info.evaluated},
            {"reused", info.reused},
            {"deduplicated", info.deduplicated},
            {"wall_ms", info.wall_ms},
            {"build_busy_ms", info.build_busy_ms},
            {"build_cpu_ms", info.build_cpu_ms},
            {"compiled", info.compiled},
            {"compiled_with_pch", info.compiled_with_pch},
            {"compiled_light", info.compiled_light},
            {"compiled_light_fell_back", info.compiled_light_fell_back},
            {"compiled_split", info.compiled_split},
            {"warmed", info.warmed},
            {"retried", info.retried},
            {"lane_busy_ms", info.lane_busy_ms},
            {"warm_ms", info.warm_ms},
            {"timeline", info.timeline.ToJson()},
            {"warnings", info.warnings},
            {"stopped", info.stopped},
            {"not_evaluated", info.not_evaluated}}},
          {"overall", AggregateJson(m.overall)},
          {"levels", levels},
          {"families", families},
          {"problems", problems}};
}

json RecordJson(const SampleRecord& r) {
  return {{"level", r.level},
          {"problem", r.problem},
          {"problem_path", r.problem_path.string()},
          {"sample", r.sample_path.string()},
          {"index", r.index},
          {"from_store", r.from_store},
          {"verdict", ToJson(r.verdict)}};
}

Status WriteOutputs(const fs::path& out_dir, const Metrics& m, const RunInfo& info,
                    const std::vector<SampleRecord>& records) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::IoError("cannot create " + out_dir.string() + ": " + ec.message());
  auto write = [&](const std::string& name, const std::string& text) -> Status {
    fs::path final_path = out_dir / name, tmp = out_dir / (name + ".tmp");
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f << text;
      if (!f) return Status::IoError("cannot write " + tmp.string());
    }
    fs::rename(tmp, final_path, ec);
    if (ec) return Status::IoError("cannot rename " + tmp.string() + ": " + ec.message());
    return Status::Ok();
  };
  std::string jsonl;
  for (const auto& r : records) jsonl += RecordJson(r).dump() + "\n";
  for (auto s : {write("results.json", ResultsJson(m, info).dump(2) + "\n"),
                 write("report.md", RenderMarkdown(m, info)),
                 write("report.html", RenderHtml(m, info)), write("verdicts.jsonl", jsonl)}) {
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace kf::bench
