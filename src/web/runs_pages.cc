// Runs: the list of bench runs, one run (metrics, charts, problems, samples), two compared.
// A run's metrics are computed again from its samples (bench::Compute), so the pages and the
// run's own report agree by construction.
#include <map>
#include <set>

#include "bench/charts.h"
#include "bench/metrics.h"
#include "bench/report.h"
#include "web/pages.h"

namespace kf::web {
namespace {

using nlohmann::json;

constexpr size_t kSamplesPerPage = 500;

bench::Metrics MetricsOf(const std::vector<store::RunSampleRow>& rows, int k) {
  std::vector<bench::Sample> samples;
  for (const auto& r : rows) {
    VerdictStatus s = VerdictStatus::kInfraError;
    StatusFromName(r.status, &s);
    samples.push_back({r.level, r.problem, s, r.speedup_vs_eager, r.speedup_vs_compile, "",
                       r.speedup_vs_eager_lo, r.speedup_vs_compile_lo});
  }
  return bench::Compute(samples, {.k = std::max(1, k)});
}

std::string Frac(const json& o, const char* key) {
  const json v = JGet(o, key);
  return v.is_number() ? Pct(v.get<double>()) : "n/a";
}
std::string TimesOf(const json& o, const char* key) {
  const json v = JGet(o, key);
  return v.is_number() ? Times(v.get<double>()) : "n/a";
}
std::string Count(const json& o, const char* key) {
  return std::to_string(static_cast<long long>(JNum(o, key)));
}

std::string RunLabel(const store::RunRow& r) { return "#" + std::to_string(r.id) + " " + r.model; }

// Two selects of runs and a button: the compare form (GET, so a comparison is a link).
std::string CompareForm(const std::vector<store::RunRow>& runs, int64_t a, int64_t b) {
  auto select = [&](const char* name, int64_t chosen) {
    std::string o = std::string("<select name=\"") + name + "\" id=\"cmp-" + name + "\">";
    for (const auto& r : runs) {
      o += "<option value=\"" + std::to_string(r.id) + "\"" + (r.id == chosen ? " selected" : "") +
           ">" + H(RunLabel(r) + " · " + r.started_at) + "</option>";
    }
    return o + "</select>";
  };
  return "<form class=\"inline\" method=\"get\" action=\"/ui/compare\">Compare " + select("a", a) +
         " with " + select("b", b) +
         " <button type=\"submit\" id=\"compare\">Compare</button></form>";
}

// Pass@1 of the last runs, oldest left: an SVG bar each.
std::string TrendChart(const std::vector<store::RunRow>& newest_first) {
  const size_t n = std::min<size_t>(newest_first.size(), 30);
  if (n < 2) return "";
  const double bar = 22, h = 120, top = 10, left = 36;
  const double w = left + bar * n + 10;
  std::string o = "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(w) +
                  "\" height=\"" + Num(h + 40) + "\" role=\"img\" aria-label=\"pass@1 by run\">";
  for (int t = 0; t <= 4; ++t) {
    const double y = top + h - h * t / 4.0;
    o += "<line x1=\"" + Num(left) + "\" x2=\"" + Num(w) + "\" y1=\"" + Num(y) + "\" y2=\"" +
         Num(y) + "\" stroke=\"#ddd\"/><text x=\"" + Num(left - 4) + "\" y=\"" + Num(y + 4) +
         "\" font-size=\"10\" text-anchor=\"end\">" + std::to_string(t * 25) + "%</text>";
  }
  for (size_t i = 0; i < n; ++i) {
    const store::RunRow& r = newest_first[n - 1 - i];
    const double v = JNum(r.overall, "pass_at_1"), bh = h * v, x = left + i * bar + 3;
    o += "<rect x=\"" + Num(x) + "\" y=\"" + Num(top + h - bh) + "\" width=\"" + Num(bar - 6) +
         "\" height=\"" + Num(bh) + "\" fill=\"#1565c0\"><title>" + H(RunLabel(r)) + ": pass@1 " +
         Pct(v) + "</title></rect><text x=\"" + Num(x + (bar - 6) / 2) + "\" y=\"" +
         Num(top + h + 14) + "\" font-size=\"10\" text-anchor=\"middle\">" + std::to_string(r.id) +
         "</text>";
  }
  return o + "</svg>";
}

std::string SummaryTableHtml(const bench::Metrics& m) {
  bench::Table t = bench::SummaryTable(m);
  std::string o = "<table class=\"data\"><tr><th>metric</th>";
  for (const auto& c : t.columns) o += "<th>" + H(c) + "</th>";
  o += "</tr>";
  for (const auto& [name, cells] : t.rows) {
    o += "<tr><td>" + H(name) + "</td>";
    for (const auto& v : cells) o += "<td class=\"n\">" + H(v) + "</td>";
    o += "</tr>";
  }
  return o + "</table>";
}

std::string ProblemLink(const std::string& id) {
  return "<a href=\"/ui/problem?id=" + H(U(id, true)) + "\">" + H(id) + "</a>";
}

// `inner_html` linked to the sample's verdict page (when its verdict was stored).
std::string VerdictLink(const store::RunSampleRow& r, const std::string& inner_html) {
  if (r.verdict_key.empty()) return inner_html;
  return "<a href=\"/ui/verdicts/" + H(r.verdict_key) + "\">" + inner_html + "</a>";
}

}  // namespace

Response RunsPage(const Ctx& c) {
  auto runs = c.store->ListRuns(500);
  if (!runs.ok()) return Failure(c, runs.status());
  std::string o = "<h1>Runs</h1>";
  if (runs->empty()) {
    o += "<p class=\"empty\">No runs in this store yet. <code>kforge bench --problems DIR "
         "--samples DIR --model NAME</code> records one (with the same <code>--cache</code>).</p>";
    return Html(c, 200, "Runs", "runs", o);
  }
  const int64_t a = runs->size() > 1 ? (*runs)[1].id : (*runs)[0].id;
  o += CompareForm(*runs, a, (*runs)[0].id) + TrendChart(*runs);
  o += "<table class=\"data\" id=\"runs\"><tr><th>run</th><th>model</th><th>started</th>"
       "<th>backend</th><th>device</th><th>policy</th><th>samples</th><th>problems</th>"
       "<th>pass@1</th><th>pass@k</th><th>avg@k</th><th>faster vs eager</th>"
       "<th>faster vs compile</th><th>fast_1</th><th>geomean vs eager</th></tr>";
  for (const auto& r : *runs) {
    const json& ov = r.overall;
    const json fast = JGet(ov, "fast_p");
    o += "<tr><td><a href=\"/ui/runs/" + std::to_string(r.id) + "\">#" + std::to_string(r.id) +
         "</a></td><td>" + H(r.model) + "</td><td>" + H(r.started_at) + "</td><td>" + H(r.backend) +
         "</td><td>" + H(r.device) + "</td><td>" + H(r.policy) + "</td><td class=\"n\">" +
         std::to_string(r.samples) + "</td><td class=\"n\">" + Count(ov, "problems") +
         "</td><td class=\"n\">" + Frac(ov, "pass_at_1") + "</td><td class=\"n\">" +
         Frac(ov, "pass_at_k") + " <small>k=" + std::to_string(r.k) +
         "</small></td><td class=\"n\">" + Frac(ov, "avg_at_k") + "</td><td class=\"n\">" +
         Frac(ov, "faster_rate_vs_eager") + "</td><td class=\"n\">" +
         Frac(ov, "faster_rate_vs_compile") + "</td><td class=\"n\">" + Frac(fast, "fast_1") +
         "</td><td class=\"n\">" + TimesOf(ov, "geomean_speedup_vs_eager") + "</td></tr>";
  }
  return Html(c, 200, "Runs", "runs", o + "</table>");
}

Response RunPage(const Ctx& c, int64_t id) {
  auto run = c.store->GetRun(id);
  if (!run.ok()) return Failure(c, run.status());
  if (!run->has_value()) return NotFound(c, "no run #" + std::to_string(id) + " in this store");
  const store::RunRow& r = **run;
  auto rows = c.store->RunSamples(id);
  if (!rows.ok()) return Failure(c, rows.status());
  const bench::Metrics m = MetricsOf(*rows, r.k);
  const json info = JGet(r.results, "run");
  std::string o = "<h1>Run #" + std::to_string(id) + " · " + H(r.model) +
                  "</h1><p class=\"facts\">" + H(r.started_at) + " · " + H(r.backend) +
                  (r.device.empty() ? "" : " (" + H(r.device) + ")") + " · policy " + H(r.policy) +
                  " · k = " + std::to_string(r.k) + " · " + std::to_string(rows->size()) +
                  " samples (" + std::to_string(static_cast<long long>(JNum(info, "evaluated"))) +
                  " evaluated, " + std::to_string(static_cast<long long>(JNum(info, "reused"))) +
                  " from the store) · wall " + Num(JNum(info, "wall_ms") / 1000) +
                  " s · samples from <code>" + H(JStr(info, "samples_root")) + "</code></p>";
  if (!JStr(info, "stopped").empty()) {
    o += "<p class=\"error\">Stopped early (" + H(JStr(info, "stopped")) +
         "): " + std::to_string(static_cast<long long>(JNum(info, "not_evaluated"))) +
         " samples not evaluated.</p>";
  }
  o += "<div class=\"charts\"><figure>" + bench::RateChart(m) +
       "<figcaption>rates per level</figcaption></figure><figure>" + bench::FastPChart(m.overall) +
       "<figcaption>fast_p vs eager</figcaption></figure></div>" + bench::StatusChart(m.overall);
  o += "<h2>Metrics</h2>" + SummaryTableHtml(m);
  o += "<h2>Problems</h2><table class=\"data\" id=\"problems\"><tr><th>problem</th><th>n</th>"
       "<th>correct</th><th>pass@" +
       std::to_string(r.k) + "</th><th>avg</th><th>best vs eager</th><th>statuses</th></tr>";
  for (const auto& p : m.problems) {
    o += "<tr><td>" + ProblemLink(p.level + "/" + p.problem) + "</td><td class=\"n\">" +
         std::to_string(p.n) + "</td><td class=\"n\">" + std::to_string(p.c) +
         "</td><td class=\"n\">" + Pct(p.pass_at_k) + "</td><td class=\"n\">" + Pct(p.avg_at_k) +
         "</td><td class=\"n\">" + Times(p.best_speedup_vs_eager) + "</td><td>";
    for (const auto& [s, n] : p.status_counts) o += Badge(s) + "&nbsp;" + std::to_string(n) + " ";
    o += "</td></tr>";
  }
  // Samples a page at a time: a run of 10,000 would be megabytes of table.
  int64_t page = 1;
  if (!c.Param("page").empty() && !ParseId(c.Param("page"), &page)) page = 1;
  const size_t first = std::min(rows->size(), static_cast<size_t>(page - 1) * kSamplesPerPage);
  const size_t last = std::min(rows->size(), first + kSamplesPerPage);
  std::string pager;
  if (rows->size() > kSamplesPerPage) {
    const std::string base = "/ui/runs/" + std::to_string(id) + "?page=";
    pager = "<p class=\"facts\">samples " + std::to_string(first + 1) + "–" + std::to_string(last) +
            " of " + std::to_string(rows->size());
    if (page > 1)
      pager +=
          " · <a href=\"" + base + std::to_string(page - 1) + "#samples\">&lsaquo; previous</a>";
    if (last < rows->size())
      pager += " · <a href=\"" + base + std::to_string(page + 1) + "#samples\">next &rsaquo;</a>";
    pager += "</p>";
  }
  o += "</table><h2>Samples</h2>" + pager +
       "<table class=\"data\" id=\"samples\"><tr><th>problem</th>"
       "<th>sample</th><th>status</th><th>reward</th><th>vs eager</th><th>vs compile</th>"
       "<th>time</th><th>file</th></tr>";
  for (size_t i = first; i < last; ++i) {
    const store::RunSampleRow& s = (*rows)[i];
    o += "<tr><td>" + ProblemLink(s.problem_id) + "</td><td class=\"n\">" +
         VerdictLink(s, "#" + std::to_string(s.index)) + "</td><td>" +
         VerdictLink(s, Badge(s.status)) + "</td><td class=\"n\">" +
         (s.reward ? Num(*s.reward) : "n/a") + "</td><td class=\"n\">" + Times(s.speedup_vs_eager) +
         "</td><td class=\"n\">" + Times(s.speedup_vs_compile) + "</td><td class=\"n\">" +
         Ms(s.candidate_ms) + "</td><td><code>" + H(s.sample_path) + "</code></td></tr>";
  }
  o += "</table>" + pager;
  const json warnings = JGet(info, "warnings");
  if (warnings.is_array() && !warnings.empty()) {
    o += "<h2>Warnings</h2><ul>";
    for (const auto& w : warnings)
      o += "<li>" + H(w.is_string() ? w.get<std::string>() : w.dump()) + "</li>";
    o += "</ul>";
  }
  return Html(c, 200, "Run #" + std::to_string(id), "runs", o);
}

Response ComparePage(const Ctx& c) {
  int64_t ids[2] = {0, 0};
  if (!ParseId(c.Param("a"), &ids[0]) || !ParseId(c.Param("b"), &ids[1])) {
    return Html(c, 400, "Compare", "runs",
                "<h1>Compare</h1><p class=\"error\">Give two run ids: "
                "<code>/ui/compare?a=1&amp;b=2</code>.</p>");
  }
  store::RunRow runs[2];
  bench::Metrics m[2];
  for (int i = 0; i < 2; ++i) {
    auto run = c.store->GetRun(ids[i]);
    if (!run.ok()) return Failure(c, run.status());
    if (!run->has_value()) return NotFound(c, "no run #" + std::to_string(ids[i]));
    runs[i] = **run;
    auto rows = c.store->RunSamples(ids[i]);
    if (!rows.ok()) return Failure(c, rows.status());
    m[i] = MetricsOf(*rows, runs[i].k);
  }
  auto all = c.store->ListRuns(500);
  std::string o = "<h1>Run #" + std::to_string(ids[0]) + " vs #" + std::to_string(ids[1]) + "</h1>";
  if (all.ok()) o += CompareForm(*all, ids[0], ids[1]);
  bench::Table t[2] = {bench::SummaryTable(m[0]), bench::SummaryTable(m[1])};
  o += "<h2>Metrics</h2><table class=\"data\" id=\"compare-metrics\"><tr><th>metric</th><th>" +
       H(RunLabel(runs[0])) + "</th><th>" + H(RunLabel(runs[1])) + "</th></tr>";
  for (size_t i = 0; i < t[0].rows.size(); ++i) {
    const auto& [name, cells] = t[0].rows[i];
    std::string other = "n/a";
    for (const auto& [n2, c2] : t[1].rows) {
      if (n2 == name) other = c2[0];
    }
    o += "<tr" + std::string(cells[0] != other ? " class=\"changed\"" : "") + "><td>" + H(name) +
         "</td><td class=\"n\">" + H(cells[0]) + "</td><td class=\"n\">" + H(other) + "</td></tr>";
  }
  o += "</table><h2>Problems</h2><table class=\"data\" id=\"compare-problems\"><tr>"
       "<th>problem</th><th>" +
       H(RunLabel(runs[0])) + "<br>correct / n · best</th><th>" + H(RunLabel(runs[1])) +
       "<br>correct / n · best</th><th>change</th></tr>";
  std::map<std::string, const bench::ProblemMetrics*> by[2];
  std::set<std::string> ids_all;
  for (int i = 0; i < 2; ++i) {
    for (const auto& p : m[i].problems) {
      by[i][p.level + "/" + p.problem] = &p;
      ids_all.insert(p.level + "/" + p.problem);
    }
  }
  for (const auto& id : ids_all) {
    const bench::ProblemMetrics* p[2] = {by[0].count(id) ? by[0][id] : nullptr,
                                         by[1].count(id) ? by[1][id] : nullptr};
    auto cell = [](const bench::ProblemMetrics* q) {
      return q ? std::to_string(q->c) + " / " + std::to_string(q->n) + " · " +
                     Times(q->best_speedup_vs_eager)
               : std::string("—");
    };
    std::string change = "same", cls = "";
    if (!p[0] || !p[1]) {
      change = p[0] ? "only in #" + std::to_string(ids[0]) : "only in #" + std::to_string(ids[1]);
    } else if (p[1]->avg_at_k != p[0]->avg_at_k) {
      const bool up = p[1]->avg_at_k > p[0]->avg_at_k;
      change = up ? "more correct" : "fewer correct";
      cls = up ? "better" : "worse";
    } else if (p[1]->best_speedup_vs_eager.value_or(0) != p[0]->best_speedup_vs_eager.value_or(0)) {
      const bool up =
          p[1]->best_speedup_vs_eager.value_or(0) > p[0]->best_speedup_vs_eager.value_or(0);
      change = up ? "faster" : "slower";
      cls = up ? "better" : "worse";
    }
    o += "<tr" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + "><td>" +
         ProblemLink(id) + "</td><td class=\"n\">" + cell(p[0]) + "</td><td class=\"n\">" +
         cell(p[1]) + "</td><td>" + H(change) + "</td></tr>";
  }
  return Html(c, 200, "Compare runs", "runs", o + "</table>");
}

}  // namespace kf::web
