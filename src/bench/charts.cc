#include "bench/charts.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include "bench/progress.h"
#include "bench/report.h"

namespace kf::bench {
std::string Num1(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

std::string HtmlEscape(std::string_view s) {
  std::string o;
  o.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

const char* StatusColor(const std::string& s) {
  if (s == "ok") return "#2e7d32";
  if (s == "incorrect") return "#f9a825";
  if (s == "compile_error") return "#8d6e63";
  if (s == "runtime_error") return "#e65100";
  if (s == "timeout") return "#6a1b9a";
  if (s == "cheat") return "#c62828";
  if (s == "format_error") return "#546e7a";
  return "#9e9e9e";  // infra_error
}

// Grouped bars in [0, 1]: one group per level (and overall), one bar per series.
std::string RateChart(const Metrics& m) {
  struct Series {
    std::string name, color;
    double (*get)(const Aggregate&);
  };
  std::vector<Series> series = {
      {"pass@k", "#1565c0", [](const Aggregate& a) { return a.pass_at_k; }},
      {"avg@k", "#64b5f6", [](const Aggregate& a) { return a.avg_at_k; }},
      {"faster vs eager", "#2e7d32", [](const Aggregate& a) { return a.faster_rate_vs_eager; }},
  };
  std::vector<std::pair<std::string, const Aggregate*>> groups = {{"overall", &m.overall}};
  for (const auto& [l, a] : m.per_level) groups.emplace_back(l, &a);
  const double bar = 22, gap = 26, h = 180, top = 20, left = 40;
  double group_w = bar * series.size() + gap;
  // Wide enough for the bars and for the legend below them (120 px an entry).
  double w = std::max(left + group_w * groups.size() + 20, left + 120.0 * series.size());
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << Num1(w) << "' height='" << Num1(h + 70)
    << "' role='img' aria-label='rates per level'>";
  for (int t = 0; t <= 4; ++t) {
    double y = top + h - h * t / 4.0;
    o << "<line x1='" << left << "' x2='" << Num1(w - 10) << "' y1='" << Num1(y) << "' y2='" << Num1(y)
      << "' stroke='#ddd'/><text x='" << left - 4 << "' y='" << Num1(y + 4)
      << "' font-size='10' text-anchor='end'>" << t * 25 << "%</text>";
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    double x0 = left + gap / 2 + g * group_w;
    for (size_t s = 0; s < series.size(); ++s) {
      double v = series[s].get(*groups[g].second);
      double bh = h * v;
      o << "<rect x='" << Num1(x0 + s * bar) << "' y='" << Num1(top + h - bh) << "' width='"
        << Num1(bar - 3) << "' height='" << Num1(bh) << "' fill='" << series[s].color << "'><title>"
        << HtmlEscape(groups[g].first + " " + series[s].name) << ": " << Percent(v)
        << "</title></rect>";
    }
    o << "<text x='" << Num1(x0 + bar * series.size() / 2) << "' y='" << Num1(top + h + 14)
      << "' font-size='11' text-anchor='middle'>" << HtmlEscape(groups[g].first) << "</text>";
  }
  for (size_t s = 0; s < series.size(); ++s) {
    double x = left + s * 120;
    o << "<rect x='" << Num1(x) << "' y='" << Num1(top + h + 30) << "' width='10' height='10' fill='"
      << series[s].color << "'/><text x='" << Num1(x + 14) << "' y='" << Num1(top + h + 39)
      << "' font-size='11'>" << HtmlEscape(series[s].name) << "</text>";
  }
  o << "</svg>";
  return o.str();
}

// One horizontal bar split by status, overall.
std::string StatusChart(const Aggregate& a) {
  int total = 0;
  for (const auto& [s, n] : a.status_counts) total += n;
  const double w = 600, h = 24;
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h + 40
    << "' role='img' aria-label='statuses'>";
  double x = 0, lx = 0;
  for (const auto& [s, n] : a.status_counts) {
    double bw = total > 0 ? w * n / total : 0;
    o << "<rect x='" << Num1(x) << "' y='0' width='" << Num1(bw) << "' height='" << h << "' fill='"
      << StatusColor(s) << "'><title>" << HtmlEscape(s) << ": " << n << "</title></rect>";
    x += bw;
    o << "<rect x='" << Num1(lx) << "' y='" << h + 10 << "' width='10' height='10' fill='"
      << StatusColor(s) << "'/><text x='" << Num1(lx + 13) << "' y='" << h + 19
      << "' font-size='11'>" << HtmlEscape(s) << " " << n << "</text>";
    lx += 14 + 8 * (s.size() + std::to_string(n).size() + 2);
  }
  o << "</svg>";
  return o.str();
}

// fast_p as bars: the share of samples correct and faster than p x eager.
std::string FastPChart(const Aggregate& a) {
  const double bar = 50, h = 140, top = 16, left = 40;
  double w = left + bar * a.fast_p.size() + 20;
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << Num1(w) << "' height='" << Num1(h + 40)
    << "' role='img' aria-label='fast_p'>";
  for (int t = 0; t <= 4; ++t) {
    double y = top + h - h * t / 4.0;
    o << "<line x1='" << left << "' x2='" << Num1(w - 10) << "' y1='" << Num1(y) << "' y2='" << Num1(y)
      << "' stroke='#ddd'/><text x='" << left - 4 << "' y='" << Num1(y + 4)
      << "' font-size='10' text-anchor='end'>" << t * 25 << "%</text>";
  }
  for (size_t i = 0; i < a.fast_p.size(); ++i) {
    auto [p, v] = a.fast_p[i];
    double x = left + i * bar + 8, bh = h * v;
    char label[32];
    std::snprintf(label, sizeof label, "fast_%g", p);
    o << "<rect x='" << Num1(x) << "' y='" << Num1(top + h - bh) << "' width='" << Num1(bar - 16)
      << "' height='" << Num1(bh) << "' fill='#1565c0'><title>" << label << ": " << Percent(v)
      << "</title></rect><text x='" << Num1(x + (bar - 16) / 2) << "' y='" << Num1(top + h + 14)
      << "' font-size='10' text-anchor='middle'>" << label << "</text>";
  }
  o << "</svg>";
  return o.str();
}

namespace {

// A polyline (or a closed area down to the panel's base) through (x, y) points.
std::string Path(const std::vector<std::pair<double, double>>& xy, double base, bool area,
                 const char* color) {
  std::ostringstream o;
  o << "<polyline fill='" << (area ? color : "none") << "' fill-opacity='0.35' stroke='" << color
    << "' stroke-width='1.5' points='";
  if (area && !xy.empty()) o << Num1(xy.front().first) << "," << Num1(base) << " ";
  for (const auto& [x, y] : xy) o << Num1(x) << "," << Num1(y) << " ";
  if (area && !xy.empty()) o << Num1(xy.back().first) << "," << Num1(base);
  o << "'/>";
  return o.str();
}

}  // namespace

std::string TimelineChart(const Timeline& t, size_t total) {
  const auto& pts = t.points();
  if (pts.empty()) return "";
  const double left = 60, w = 640, panel = 70, gap = 28, top = 14;
  const double span = std::max(pts.back().t0_s + t.bucket_s(), t.bucket_s());
  size_t queue_max = 1;
  for (const auto& p : pts) queue_max = std::max({queue_max, p.build_queue, p.building});
  const double total_d = static_cast<double>(std::max<size_t>(total, 1));
  auto x_of = [&](double s) { return left + (w - left - 10) * s / span; };
  struct Series {
    const char* color;
    bool area;                                  // filled down to the panel's base
    std::vector<std::pair<double, double>> xy;  // x in pixels, y in [0, 1] from the top
  };
  struct Panel {
    std::string title, top_label;
    std::vector<Series> series;
  };
  std::vector<Panel> panels = {
      {"samples done", std::to_string(total), {{"#1565c0", false, {}}}},
      {"lanes busy (" + std::to_string(t.lanes()) + ")", "100%", {{"#2e7d32", true, {}}}},
      {"build queue: waiting, building",
       std::to_string(queue_max),
       {{"#8d6e63", true, {}}, {"#f9a825", false, {}}}},
  };
  for (const auto& p : pts) {
    const double mid = x_of(p.t0_s + t.bucket_s() / 2);
    panels[0].series[0].xy.emplace_back(mid, 1 - std::min(1.0, p.done / total_d));
    panels[1].series[0].xy.emplace_back(mid, 1 - p.lane_busy);
    panels[2].series[0].xy.emplace_back(mid, 1 - static_cast<double>(p.build_queue) / queue_max);
    panels[2].series[1].xy.emplace_back(mid, 1 - static_cast<double>(p.building) / queue_max);
  }
  const double h = top + 3 * (panel + gap) + 10;
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << Num1(w) << "' height='" << Num1(h)
    << "' role='img' aria-label='the run over time'>";
  for (size_t i = 0; i < panels.size(); ++i) {
    const double y0 = top + i * (panel + gap), base = y0 + panel;
    o << "<text x='" << left << "' y='" << Num1(y0 - 3) << "' font-size='11'>"
      << HtmlEscape(panels[i].title) << "</text>";
    o << "<line x1='" << left << "' x2='" << Num1(w - 10) << "' y1='" << Num1(base) << "' y2='"
      << Num1(base) << "' stroke='#999'/><line x1='" << left << "' x2='" << Num1(w - 10)
      << "' y1='" << Num1(y0) << "' y2='" << Num1(y0) << "' stroke='#eee'/>";
    o << "<text x='" << left - 4 << "' y='" << Num1(y0 + 4) << "' font-size='10' text-anchor='end'>"
      << HtmlEscape(panels[i].top_label) << "</text><text x='" << left - 4 << "' y='"
      << Num1(base + 4) << "' font-size='10' text-anchor='end'>0</text>";
    for (const Series& line : panels[i].series) {
      auto xy = line.xy;
      for (auto& [x, y] : xy) y = y0 + panel * y;
      o << Path(xy, base, line.area, line.color);
    }
  }
  // The time axis under the last panel: five ticks.
  const double axis = top + 3 * (panel + gap) - gap + 12;
  for (int k = 0; k <= 4; ++k) {
    const double s = span * k / 4;
    const char* anchor = k == 0 ? "start" : k == 4 ? "end" : "middle";  // inside the chart
    o << "<text x='" << Num1(x_of(s)) << "' y='" << Num1(axis) << "' font-size='10' "
      << "text-anchor='" << anchor << "'>" << HtmlEscape(Duration(s)) << "</text>";
  }
  o << "</svg>";
  return o.str();
}

}  // namespace kf::bench

