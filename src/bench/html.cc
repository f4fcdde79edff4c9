// report.html: one self-contained page. Charts are inline SVG (charts.h); no scripts, no fonts
// or styles fetched, so the file can be mailed or archived and opened anywhere.
#include <cstdio>
#include <sstream>

#include "bench/charts.h"
#include "bench/report.h"

namespace kf::bench {
std::string RenderHtml(const Metrics& m, const RunInfo& info) {
  std::ostringstream o;
  o << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>kforge bench</title><style>"
       "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:"
       "1em 0}"
       "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}td.n{text-align:right}"
       "th{background:#f3f3f3}h2{margin-top:1.6em}.st{display:inline-block;padding:0 5px;"
       "border-radius:3px;color:#fff;margin-right:3px;font-size:12px}</style></head><body>";
  o << "<h1>kforge bench</h1><p>" << HtmlEscape(info.started_at) << " &middot; backend "
    << HtmlEscape(info.backend) << (info.device.empty() ? "" : " (" + HtmlEscape(info.device) + ")")
    << " &middot; policy " << HtmlEscape(info.policy)
    << (info.model.empty() ? "" : " &middot; model " + HtmlEscape(info.model)) << " &middot; "
    << info.lanes << " lane(s)" << (info.sequential ? " &middot; sequential" : "") << " &middot; "
    << info.samples << " samples (" << info.evaluated << " evaluated now, " << info.reused
    << " from the store) &middot; wall " << Num1(info.wall_ms / 1000) << " s</p>";
  o << "<p>Pass@k uses k' = min(k, n) per problem (k = " << m.options.k
    << "); infra_error samples are not counted; Faster Rate is the share of samples correct and "
       "more than "
    << Num1(m.options.faster_threshold) << "x faster.</p>";
  o << "<h2>Rates</h2>" << RateChart(m);
  o << "<h2>Statuses</h2>" << StatusChart(m.overall);
  o << "<h2>fast_p (vs eager)</h2>" << FastPChart(m.overall);
  if (std::string tl = TimelineChart(info.timeline, info.samples); !tl.empty()) {
    o << "<h2>Timeline</h2><p>Samples done, the share of the " << info.timeline.lanes()
      << " lane(s) executing a candidate or preparing a problem (mean per "
      << Num1(info.timeline.bucket_s()) << " s), and the build queue (most waiting and most "
      << "building in that time).</p>"
      << tl;
  }
  Table t = SummaryTable(m);
  o << "<h2>Metrics</h2><table><tr><th>metric</th>";
  for (const auto& c : t.columns) o << "<th>" << HtmlEscape(c) << "</th>";
  o << "</tr>";
  for (const auto& [name, cells] : t.rows) {
    o << "<tr><td>" << HtmlEscape(name) << "</td>";
    for (const auto& c : cells) o << "<td class='n'>" << HtmlEscape(c) << "</td>";
    o << "</tr>";
  }
  o << "</table><h2>Problems</h2><table><tr><th>level</th><th>problem</th><th>n</th>"
       "<th>correct</th><th>pass@"
    << m.options.k
    << "</th><th>avg</th><th>best speedup</th>"
       "<th>statuses</th></tr>";
  for (const auto& p : m.problems) {
    o << "<tr><td>" << HtmlEscape(p.level) << "</td><td>" << HtmlEscape(p.problem)
      << "</td><td class='n'>" << p.n << "</td><td class='n'>" << p.c << "</td><td class='n'>"
      << Percent(p.pass_at_k) << "</td><td class='n'>" << Percent(p.avg_at_k)
      << "</td><td class='n'>" << Times(p.best_speedup_vs_eager) << "</td><td>";
    for (const auto& [s, n] : p.status_counts) {
      o << "<span class='st' style='background:" << StatusColor(s) << "'>" << HtmlEscape(s) << " "
        << n << "</span>";
    }
    o << "</td></tr>";
  }
  o << "</table>";
  if (!info.warnings.empty()) {
    o << "<h2>Warnings</h2><ul>";
    for (const auto& w : info.warnings) o << "<li>" << HtmlEscape(w) << "</li>";
    o << "</ul>";
  }
  o << "</body></html>\n";
  return o.str();
}

}  // namespace kf::bench
