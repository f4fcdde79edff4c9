// The verdict page: what a verdict says (docs/VERDICT.md) laid out for a reader, with the
// kernel's source and its diagnostics at their lines.
#include <algorithm>
#include <set>

#include "common/rules.h"
#include "web/pages.h"

namespace kf::web {
namespace {

using nlohmann::json;

const StageRecord* FindStage(const Verdict& v, const std::string& name) {
  for (const auto& s : v.stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string Dump(const json& j, int indent = -1) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

// The rule a cheat broke and the evidence: each diagnostic that names a rule of the catalog
// (common/rules.h), with the catalog's name, what the rule catches and its hint. A verdict
// stored before the catalog's hint changed keeps the hint it was given, shown beside.
std::string RuleBox(const Verdict& v) {
  std::string o;
  for (const auto& d : v.diagnostics) {
    const Rule* rule = FindRule(d.code);
    if (!rule || rule->note) continue;
    o += "<section class=\"rule\"><h2>Rule " + H(d.code) + " · " + H(rule->name) +
         "</h2><p class=\"catches\">Catches: " + H(rule->catches) + ".</p><p>" + H(d.message) +
         "</p><p class=\"facts\">found by the " + H(d.stage) + " stage" +
         (d.line > 0 ? " at <a href=\"#L" + std::to_string(d.line) + "\">line " +
                           std::to_string(d.line) + "</a>"
                     : std::string()) +
         "</p>";
    if (!d.excerpt.empty()) o += "<pre class=\"excerpt\">" + H(d.excerpt) + "</pre>";
    o += "<p class=\"hint\">" + H(rule->hint) + "</p>";
    if (!d.hint.empty() && d.hint != rule->hint) {
      o += "<p class=\"hint recorded\">given with this verdict: " + H(d.hint) + "</p>";
    }
    o += "</section>";
  }
  return o;
}

// Candidate p10..p90 as a box with its median, its quantiles as ticks when the verdict has
// them, and the eager and torch.compile medians as lines, on one axis in ms.
std::string TimingChart(const Verdict& v, const json& quantiles) {
  if (!v.candidate_ms && !v.eager_ms && !v.compile_ms) return "";
  double hi = 0;
  if (v.candidate_ms) hi = std::max(hi, v.candidate_ms->p90_ms);
  if (v.eager_ms) hi = std::max(hi, *v.eager_ms);
  if (v.compile_ms) hi = std::max(hi, *v.compile_ms);
  const json qs = quantiles.is_array() ? quantiles : json::array();
  for (const auto& q : qs) {
    if (q.is_number()) hi = std::max(hi, q.get<double>());
  }
  if (hi <= 0) return "";
  hi *= 1.15;
  const double w = 640, left = 90, right = 20, plot = w - left - right;
  auto x = [&](double ms) { return left + plot * ms / hi; };
  int rows = 0;
  std::string o;
  auto line_row = [&](const std::string& label, double ms, const char* color) {
    const double y = 14 + rows++ * 26;
    o += "<text x=\"" + Num(left - 6) + "\" y=\"" + Num(y + 12) +
         "\" font-size=\"11\" text-anchor=\"end\">" + H(label) + "</text><line x1=\"" + Num(x(ms)) +
         "\" x2=\"" + Num(x(ms)) + "\" y1=\"" + Num(y) + "\" y2=\"" + Num(y + 18) + "\" stroke=\"" +
         color + "\" stroke-width=\"3\"/><text x=\"" + Num(x(ms) + 5) + "\" y=\"" + Num(y + 13) +
         "\" font-size=\"11\">" + H(Ms(ms)) + "</text>";
  };
  if (v.candidate_ms) {
    const TimingSummary& t = *v.candidate_ms;
    const double y = 14 + rows++ * 26;
    o += "<text x=\"" + Num(left - 6) + "\" y=\"" + Num(y + 12) +
         "\" font-size=\"11\" text-anchor=\"end\">candidate</text><rect x=\"" + Num(x(t.p10_ms)) +
         "\" y=\"" + Num(y) + "\" width=\"" + Num(std::max(1.0, x(t.p90_ms) - x(t.p10_ms))) +
         "\" height=\"18\" fill=\"#90caf9\"><title>p10 " + H(Ms(t.p10_ms)) + " · p90 " +
         H(Ms(t.p90_ms)) + " · n " + std::to_string(t.n) + "</title></rect>";
    for (const auto& q : qs) {
      if (!q.is_number()) continue;
      o += "<line x1=\"" + Num(x(q.get<double>())) + "\" x2=\"" + Num(x(q.get<double>())) +
           "\" y1=\"" + Num(y + 4) + "\" y2=\"" + Num(y + 14) + "\" stroke=\"#1565c0\"/>";
    }
    o += "<line x1=\"" + Num(x(t.median_ms)) + "\" x2=\"" + Num(x(t.median_ms)) + "\" y1=\"" +
         Num(y - 2) + "\" y2=\"" + Num(y + 20) +
         "\" stroke=\"#0d47a1\" stroke-width=\"3\"/><text x=\"" + Num(x(t.p90_ms) + 5) + "\" y=\"" +
         Num(y + 13) + "\" font-size=\"11\">median " + H(Ms(t.median_ms)) + "</text>";
  }
  if (v.eager_ms) line_row("eager", *v.eager_ms, "#2e7d32");
  if (v.compile_ms) line_row("torch.compile", *v.compile_ms, "#ef6c00");
  const double h = 14 + rows * 26 + 22;
  std::string axis = "<line x1=\"" + Num(left) + "\" x2=\"" + Num(w - right) + "\" y1=\"" +
                     Num(h - 18) + "\" y2=\"" + Num(h - 18) + "\" stroke=\"#999\"/>";
  for (int t = 0; t <= 4; ++t) {
    const double ms = hi * t / 4;
    axis += "<text x=\"" + Num(x(ms)) + "\" y=\"" + Num(h - 4) +
            "\" font-size=\"10\" text-anchor=\"middle\">" + H(Num(ms)) + "</text>";
  }
  return "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(w) +
         "\" height=\"" + Num(h) + "\" role=\"img\" aria-label=\"timing in ms\">" + o + axis +
         "</svg>";
}

std::string TimingTable(const Verdict& v) {
  std::string o;
  o += "<table class=\"data\" id=\"timing\"><tr><th></th><th>median</th><th>p10</th><th>p90</th>"
       "<th>n</th><th>speedup</th></tr>";
  if (v.candidate_ms) {
    o += "<tr><td>candidate</td><td class=\"n\">" + Ms(v.candidate_ms->median_ms) +
         "</td><td class=\"n\">" + Ms(v.candidate_ms->p10_ms) + "</td><td class=\"n\">" +
         Ms(v.candidate_ms->p90_ms) + "</td><td class=\"n\">" + std::to_string(v.candidate_ms->n) +
         "</td><td></td></tr>";
  } else {
    o += "<tr><td>candidate</td><td colspan=\"5\">not timed</td></tr>";
  }
  o += "<tr><td>eager</td><td class=\"n\">" + Ms(v.eager_ms) +
       "</td><td></td><td></td><td></td><td class=\"n\">" + Times(v.speedup_vs_eager) +
       "</td></tr><tr><td>torch.compile</td><td class=\"n\">" +
       (v.compile_ms ? Ms(v.compile_ms)
                     : H(v.compile_unavailable.empty() ? "n/a" : v.compile_unavailable)) +
       "</td><td></td><td></td><td></td><td class=\"n\">" + Times(v.speedup_vs_compile) +
       "</td></tr></table>";
  return o;
}

std::string TrialsTable(const Verdict& v) {
  const StageRecord* st = FindStage(v, "correctness");
  const json trials = st ? JGet(st->detail, "trials") : json();
  if (v.trials_total == 0) return "<p class=\"empty\">No correctness trial ran.</p>";
  std::string o = "<p>Passed " + std::to_string(v.trials_passed) + " of " +
                  std::to_string(v.trials_total) + " correctness trials.</p>";
  if (!trials.is_array() || trials.empty()) {
    return o + (v.trials_total > 0
                    ? "<p class=\"empty\">This verdict has no per-trial records (it was made "
                      "before kforge kept them); its diagnostics say where a trial failed.</p>"
                    : "");
  }
  o += "<table class=\"data\" id=\"trials\"><tr><th>trial</th><th>result</th><th>max abs "
       "error</th><th>max rel error</th><th>elements wrong</th><th>first wrong at</th></tr>";
  for (const auto& t : trials) {
    if (!t.is_object()) continue;
    if (t.contains("skipped")) {  // a trial not run: the reason in place of its numbers
      o += "<tr class=\"skip\"><td>" + H(JStr(t, "label")) +
           "</td><td>skipped</td><td colspan=\"4\">" + H(JStr(t, "skipped")) + "</td></tr>";
      continue;
    }
    const bool pass = JBool(t, "pass");
    auto num = [&](const char* k) {
      auto it = t.find(k);
      return it != t.end() && it->is_number() ? H(Num(it->get<double>())) : std::string("—");
    };
    const auto where = t.find("first_bad_index");
    o += std::string("<tr class=\"") + (pass ? "pass" : "fail") + "\"><td>" + H(JStr(t, "label")) +
         "</td><td>" + (pass ? "pass" : "fail") + "</td><td class=\"n\">" + num("max_abs_err") +
         "</td><td class=\"n\">" + num("max_rel_err") + "</td><td class=\"n\">" +
         (t.contains("bad_elements")
              ? H(Dump(JGet(t, "bad_elements"))) + " of " + H(Dump(JGet(t, "elements")))
              : std::string("—")) +
         "</td><td>" +
         (where != t.end() ? "output " + H(Dump(JGet(t, "output"))) + " at " + H(Dump(*where))
          : !JStr(t, "message").empty() ? H(JStr(t, "message"))
                                        : std::string("—")) +
         "</td></tr>";
  }
  return o + "</table>";
}

std::string StagesTable(const Verdict& v) {
  std::string o =
      "<table class=\"data\" id=\"stages\"><tr><th>stage</th><th>ok</th><th>ms</th>"
      "<th>facts</th></tr>";
  for (const auto& s : v.stages) {
    json facts = s.detail;
    if (facts.is_object()) {
      facts.erase("trials");
      facts.erase("quantiles_ms");
    }
    o += "<tr><td>" + H(s.name) + "</td><td>" + (s.ok ? "yes" : "no") + "</td><td class=\"n\">" +
         H(Num(s.ms)) + "</td><td><code class=\"wrap\">" + H(Dump(facts)) + "</code></td></tr>";
  }
  return o + "</table>";
}

// A form to pick another candidate of the same problem, and the diff when one is picked.
std::string DiffSection(const Ctx& c, const Verdict& v, const std::optional<std::string>& source,
                        const std::string& self) {
  auto others = c.store->ProblemSamples(v.problem_id, 200);
  if (!others.ok() || !source) return "";
  std::set<std::string> seen = {v.candidate_hash};
  std::string options;
  const std::string chosen = c.Param("diff");
  std::string chosen_label;
  for (const auto& r : *others) {
    if (!seen.insert(r.candidate_hash).second) continue;
    const std::string label = r.model + " · run #" + std::to_string(r.run_id) + " sample " +
                              std::to_string(r.index) + " · " + r.status + " · " +
                              Times(r.speedup_vs_eager);
    if (r.candidate_hash == chosen) chosen_label = label;
    options += "<option value=\"" + H(r.candidate_hash) + "\"" +
               (r.candidate_hash == chosen ? " selected" : "") + ">" + H(label) + "</option>";
  }
  if (options.empty()) return "";
  std::string o = "<h2>Diff</h2><form class=\"inline\" method=\"get\" action=\"" + H(self) +
                  "\">Against <select name=\"diff\" id=\"diff\">" + options +
                  "</select> <button type=\"submit\">Diff</button></form>";
  if (!chosen.empty() && IsHex64(chosen)) {
    auto text = c.store->GetText(chosen);
    if (text.ok() && text->has_value()) {
      o += DiffView(**text, *source, chosen_label.empty() ? Short(chosen) : chosen_label,
                    "this candidate");
    } else {
      o += "<p class=\"empty\">The store does not hold that candidate's text.</p>";
    }
  }
  return o;
}

}  // namespace

std::string VerdictBody(const Ctx& c, const Verdict& v, const std::optional<std::string>& source,
                        const std::string& self) {
  std::string o = "<p class=\"verdict-head\">" + Badge(StatusName(v.status)) + " reward <strong>" +
                  (v.reward ? H(Num(*v.reward)) : std::string("none")) + "</strong> · " +
                  std::to_string(v.trials_passed) + "/" + std::to_string(v.trials_total) +
                  " trials · problem <a href=\"/ui/problem?id=" + H(U(v.problem_id, true)) + "\">" +
                  H(v.problem_id) + "</a> · " + H(v.backend) +
                  (v.device.empty() ? "" : " (" + H(v.device) + ")") + " · policy " + H(v.policy) +
                  " · candidate <code>" + H(Short(v.candidate_hash)) + "</code></p>";
  o += RuleBox(v);
  if (!v.pytorch_ops.empty()) {
    o += "<p>PyTorch compute beside the kernels: ";
    for (const auto& op : v.pytorch_ops) o += "<code>" + H(op) + "</code> ";
    o += "</p>";
  }
  const StageRecord* timing = FindStage(v, "timing");
  o += "<h2>Timing</h2>";
  if (!v.candidate_ms && !v.eager_ms && !v.compile_ms) {
    o += "<p class=\"empty\">Not timed: the verdict was reached before timing.</p>";
  } else {
    o += TimingChart(v, timing ? JGet(timing->detail, "quantiles_ms") : json()) + TimingTable(v);
  }
  o += "<h2>Correctness</h2>" + TrialsTable(v);
  o += "<h2>Feedback</h2><pre class=\"feedback\">" + H(v.feedback) + "</pre>";
  o += "<h2>Kernel</h2>";
  o += source ? SourceView(*source, v.diagnostics)
              : "<p class=\"empty\">The store does not hold this candidate's text.</p>" +
                    SourceView("", v.diagnostics);
  o += DiffSection(c, v, source, self);
  o += "<h2>Stages</h2>" + StagesTable(v);
  o += "<details><summary>Verdict JSON</summary><pre class=\"json\">" + H(Dump(ToJson(v), 2)) +
       "</pre></details>";
  return o;
}

Response StoredVerdictPage(const Ctx& c, const std::string& key) {
  if (!IsHex64(key)) return NotFound(c, "no verdict '" + key + "'");
  auto v = c.store->GetVerdict(key);
  if (!v.ok()) return Failure(c, v.status());
  if (!v->has_value()) {
    return NotFound(c, "no verdict under this key (infra_error verdicts are never stored)");
  }
  const Verdict& verdict = **v;
  std::optional<std::string> source;
  auto t = c.store->GetText(verdict.candidate_hash);
  if (t.ok() && t->has_value()) source = **t;
  return Html(c, 200, "Verdict " + verdict.problem_id, "",
              "<h1>Verdict · " + H(verdict.problem_id) + "</h1>" +
                  VerdictBody(c, verdict, source, "/ui/verdicts/" + key));
}

}  // namespace kf::web
