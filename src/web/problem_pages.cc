// Problems: every problem the runs (and the service's registry) know, and per problem a
// leaderboard of its best kernels across runs and models, with the reference source.
#include <map>
#include <set>

#include "web/pages.h"

namespace kf::web {
namespace {

constexpr int kLeaderboardRows = 50;
constexpr int kSamplesRead = 5000;  // a problem's samples ranked; more than any page shows

std::string ProblemHref(const std::string& id) { return "/ui/problem?id=" + U(id, true); }

bool Matches(const std::string& id, const std::string& q) {
  return q.empty() || id.find(q) != std::string::npos;
}

}  // namespace

Response ProblemsPage(const Ctx& c) {
  auto rows = c.store->ListProblems();
  if (!rows.ok()) return Failure(c, rows.status());
  const std::string q = c.Param("q");
  std::map<std::string, store::ProblemRow> by_id;
  for (const auto& p : *rows) by_id[p.problem_id] = p;
  std::set<std::string> registered;
  if (c.problems) {
    for (const problems::Problem* p : c.problems->List()) {
      registered.insert(p->id);
      if (!by_id.count(p->id)) by_id[p->id].problem_id = p->id;
    }
  }
  std::string o =
      "<h1>Problems</h1><form class=\"inline\" method=\"get\" action=\"/ui/problems\">"
      "<input type=\"search\" name=\"q\" placeholder=\"filter\" value=\"" +
      H(q) + "\"> <button type=\"submit\">Filter</button></form>";
  if (by_id.empty()) {
    return Html(c, 200, "Problems", "problems",
                o + "<p class=\"empty\">No problems: no run is recorded in this store.</p>");
  }
  o += "<table class=\"data\" id=\"problems\"><tr><th>problem</th><th>runs</th><th>samples</th>"
       "<th>correct</th><th>best vs eager</th>" +
       std::string(c.live ? "<th></th>" : "") + "</tr>";
  for (const auto& [id, p] : by_id) {
    if (!Matches(id, q)) continue;
    o += "<tr><td><a href=\"" + H(ProblemHref(id)) + "\">" + H(id) + "</a></td><td class=\"n\">" +
         std::to_string(p.runs) + "</td><td class=\"n\">" + std::to_string(p.samples) +
         "</td><td class=\"n\">" + std::to_string(p.correct) + "</td><td class=\"n\">" +
         Times(p.best_speedup_vs_eager) + "</td>";
    if (c.live) {
      o += registered.count(id) ? "<td><a href=\"/ui/submit?problem=" + H(U(id, true)) +
                                      "\">submit a kernel</a></td>"
                                : "<td></td>";
    }
    o += "</tr>";
  }
  return Html(c, 200, "Problems", "problems", o + "</table>");
}

Response ProblemPage(const Ctx& c) {
  const std::string id = c.Param("id");
  auto rows = c.store->ProblemSamples(id, kSamplesRead);
  if (!rows.ok()) return Failure(c, rows.status());
  const problems::Problem* reg = c.problems ? c.problems->Find(id) : nullptr;
  if (rows->empty() && reg == nullptr) return NotFound(c, "no problem '" + id + "'");
  std::string o = "<h1>" + H(id) + "</h1>";
  if (c.live && reg) {
    o += "<p><a class=\"button\" href=\"/ui/submit?problem=" + H(U(id, true)) +
         "\">Submit a kernel for it</a></p>";
  }
  // The leaderboard: each distinct kernel once, at its best showing.
  o += "<h2>Best kernels</h2>";
  std::set<std::string> seen;
  int shown = 0;
  std::string board;
  int64_t newest_run = -1;
  std::string newest_hash;
  struct ModelStats {
    int samples = 0, correct = 0;
    std::optional<double> best;
  };
  std::map<std::string, ModelStats> models;
  for (const auto& r : *rows) {
    if (r.run_id > newest_run) {
      newest_run = r.run_id;
      newest_hash = r.problem_hash;
    }
    ModelStats& ms = models[r.model];
    ++ms.samples;
    if (r.status == "ok") {
      ++ms.correct;
      if (r.speedup_vs_eager && (!ms.best || *r.speedup_vs_eager > *ms.best))
        ms.best = r.speedup_vs_eager;
    }
    if (shown >= kLeaderboardRows || !seen.insert(r.candidate_hash).second) continue;
    ++shown;
    const std::string verdict =
        r.verdict_key.empty()
            ? Badge(r.status)
            : "<a href=\"/ui/verdicts/" + H(r.verdict_key) + "\">" + Badge(r.status) + "</a>";
    board += "<tr><td class=\"n\">" + std::to_string(shown) + "</td><td>" + H(r.model) +
             "</td><td><a href=\"/ui/runs/" + std::to_string(r.run_id) + "\">#" +
             std::to_string(r.run_id) + "</a> sample " + std::to_string(r.index) + "</td><td>" +
             verdict + "</td><td class=\"n\">" + Times(r.speedup_vs_eager) +
             "</td><td class=\"n\">" + Times(r.speedup_vs_compile) + "</td><td class=\"n\">" +
             Ms(r.candidate_ms) + "</td><td class=\"n\">" + (r.reward ? Num(*r.reward) : "n/a") +
             "</td><td><code>" + H(Short(r.problem_hash)) + "</code></td></tr>";
  }
  if (board.empty()) {
    o += "<p class=\"empty\">No run has a sample of this problem yet.</p>";
  } else {
    o += "<table class=\"data\" id=\"leaderboard\"><tr><th>#</th><th>model</th><th>run</th>"
         "<th>status</th><th>vs eager</th><th>vs compile</th><th>time</th><th>reward</th>"
         "<th>problem version</th></tr>" +
         board + "</table>";
    o += "<h2>By model</h2><table class=\"data\" id=\"models\"><tr><th>model</th>"
         "<th>samples</th><th>correct</th><th>best vs eager</th></tr>";
    for (const auto& [model, ms] : models) {
      o += "<tr><td>" + H(model) + "</td><td class=\"n\">" + std::to_string(ms.samples) +
           "</td><td class=\"n\">" + std::to_string(ms.correct) + "</td><td class=\"n\">" +
           Times(ms.best) + "</td></tr>";
    }
    o += "</table>";
  }
  // The reference: the newest version a run evaluated, else the registered file's text.
  std::optional<std::string> source;
  if (!newest_hash.empty()) {
    auto t = c.store->GetText(newest_hash);
    if (t.ok() && t->has_value()) source = **t;
  }
  if (!source && reg) source = reg->text;
  o += "<h2>Reference</h2>";
  o += source ? SourceView(*source, {})
              : "<p class=\"empty\">The store does not hold this problem's text.</p>";
  return Html(c, 200, id, "problems", o);
}

}  // namespace kf::web
