// charts: inline SVG charts of bench metrics, shared by report.html and the web UI. Only SVG
// presentation attributes (no style attributes, no scripts), so a page with a strict Content
// Security Policy shows them; every label is escaped.
#pragma once

#include <string>
#include <string_view>

#include "bench/metrics.h"
#include "bench/timeline.h"

namespace kf::bench {

// Text for HTML element content and quoted attributes: & < > " ' escaped (report.html and
// the web UI's pages, web::H, use this one).
std::string HtmlEscape(std::string_view s);
// A number with one decimal, for chart coordinates and labels.
std::string Num1(double x);
// The colour a status is drawn in (report.html and the web UI agree).
const char* StatusColor(const std::string& status);

// Grouped bars in [0, 1]: Pass@k, Avg@k and Faster Rate vs eager, overall and per level.
std::string RateChart(const Metrics& m);
// One horizontal bar split by status.
std::string StatusChart(const Aggregate& a);
// fast_p as bars: the share of samples correct and faster than p x eager.
std::string FastPChart(const Aggregate& a);
// The run over time, three panels on one time axis: samples done (of `total`), lanes busy
// (0-100%), and the build queue (waiting, and being built). "" when nothing was sampled.
std::string TimelineChart(const Timeline& t, size_t total);

}  // namespace kf::bench
