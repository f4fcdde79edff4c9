// The running service: the live view (the numbers of /metrics and recent jobs, refreshed by
// app.js), the submit form, and a submitted job's page, which app.js reloads once the verdict
// is there.
#include "common/hash.h"
#include "web/pages.h"

namespace kf::web {
namespace {

using nlohmann::json;
using State = queue::JobView::State;

std::string Row(const std::string& name, const std::string& value_html) {
  return "<tr><td>" + H(name) + "</td><td class=\"n\">" + value_html + "</td></tr>";
}

// Verdicts per minute between successive samples, as a small line.
std::string Sparkline(const std::vector<std::pair<int64_t, long long>>& s) {
  if (s.size() < 3) return "";
  std::vector<double> rates;
  for (size_t i = 1; i < s.size(); ++i) {
    const double dt = static_cast<double>(s[i].first - s[i - 1].first);
    rates.push_back(dt > 0 ? 60.0 * static_cast<double>(s[i].second - s[i - 1].second) / dt : 0);
  }
  double hi = 1;
  for (double r : rates) hi = std::max(hi, r);
  const double w = 300, h = 40;
  std::string pts;
  for (size_t i = 0; i < rates.size(); ++i) {
    pts += Num(w * i / (rates.size() - 1)) + "," + Num(h - h * rates[i] / hi) + " ";
  }
  return "<svg class=\"spark\" xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"40\" "
         "role=\"img\" aria-label=\"verdicts per minute\"><polyline fill=\"none\" "
         "stroke=\"#1565c0\" stroke-width=\"1.5\" points=\"" +
         pts + "\"/><title>verdicts per minute, peak " + Num(hi) + "</title></svg>";
}

std::string Panel(const Ctx& c, const LiveStats& s) {
  long long total = 0;
  for (const auto& [st, n] : s.stats.verdicts) total += n;
  c.rates.Add(c.now_s, total);
  auto rate = [&](int64_t w) {
    auto r = c.rates.PerMinute(c.now_s, w);
    return r ? H(Num(*r)) + " / min" : std::string("…");
  };
  std::string o =
      "<div class=\"cols\"><section><h2>Engine</h2><table class=\"data\">" +
      Row("engine", H(s.engine) + (s.engine_ok ? " (up)" : " (down: " + H(s.engine_error) + ")")) +
      Row("backend", H(s.backend)) + Row("problems", std::to_string(s.problems)) +
      Row("uptime", H(Num(s.uptime_s)) + " s") +
      Row("jobs in flight",
          std::to_string(s.stats.in_flight) + " of " + std::to_string(s.stats.capacity));
  for (const auto& [q, n] : s.stats.queue_depth) o += Row("queue " + q, std::to_string(n));
  for (const auto& [r, n] : s.stats.workers) o += Row("workers " + r, std::to_string(n));
  if (s.stats.requeued || s.stats.lost || s.stats.data_losses) {
    o += Row("requeued", std::to_string(s.stats.requeued)) +
         Row("lost", std::to_string(s.stats.lost)) +
         Row("Redis data losses", std::to_string(s.stats.data_losses));
  }
  o += "</table></section><section><h2>Verdicts</h2><table class=\"data\" id=\"verdict-counts\">" +
       Row("total", std::to_string(total)) + Row("last minute", rate(60)) +
       Row("last 10 minutes", rate(600));
  for (const auto& [st, n] : s.stats.verdicts) {
    o += "<tr><td>" + Badge(st) + "</td><td class=\"n\">" + std::to_string(n) + "</td></tr>";
  }
  o += "</table>" + Sparkline(c.rates.Samples()) +
       "</section><section><h2>Stages</h2>"
       "<table class=\"data\"><tr><th>stage</th><th>count</th><th>mean</th></tr>";
  for (const auto& [st, ms] : s.stats.stage_ms_sum) {
    auto it = s.stats.stage_count.find(st);
    const long long n = it == s.stats.stage_count.end() ? 0 : it->second;
    o += "<tr><td>" + H(st) + "</td><td class=\"n\">" + std::to_string(n) +
         "</td><td class=\"n\">" + (n ? Ms(ms / n) : "n/a") + "</td></tr>";
  }
  o += "</table></section></div><h2>HTTP</h2><p class=\"facts\">" + std::to_string(s.connections) +
       " connections · " + std::to_string(s.active_requests) + " requests in hand · " +
       std::to_string(s.handler_threads) + " handler threads · " + std::to_string(s.refused) +
       " refused (503) · " + std::to_string(s.head_timeouts) + " head timeouts (408) · " +
       std::to_string(s.overloads) +
       " overloads</p>"
       "<table class=\"data\" id=\"routes\"><tr><th>route</th><th>requests</th><th>errors</th>"
       "<th>mean</th><th>p50 &le;</th><th>p95 &le;</th></tr>";
  for (const auto& r : s.routes) {
    o += "<tr><td>" + H(r.route) + "</td><td class=\"n\">" + std::to_string(r.count) +
         "</td><td class=\"n\">" + std::to_string(r.errors) + "</td><td class=\"n\">" +
         Ms(r.mean_s * 1000) + "</td><td class=\"n\">" + Ms(r.p50_s * 1000) +
         "</td><td class=\"n\">" + Ms(r.p95_s * 1000) + "</td></tr>";
  }
  o += "</table><h2>Recent jobs</h2>";
  if (s.recent.empty()) return o + "<p class=\"empty\">No job was submitted since the start.</p>";
  o += "<table class=\"data\" id=\"recent\"><tr><th>job</th><th>problem</th><th>route</th>"
       "<th>submitted</th><th>state</th><th>reward</th><th>evaluation</th></tr>";
  for (const auto& j : s.recent) {
    const std::string state =
        j.state == State::kDone ? Badge(j.status) : Badge(queue::StateName(j.state));
    o += "<tr><td><a href=\"/ui/jobs/" + H(j.id) + "\"><code>" + H(Short(j.id)) +
         "</code></a></td><td>" + H(j.problem_id) + "</td><td>" + H(j.route) + "</td><td>" +
         H(When(j.submitted_at_ms)) + "</td><td>" + state + "</td><td class=\"n\">" +
         (j.reward ? H(Num(*j.reward)) : std::string("—")) + "</td><td class=\"n\">" +
         (j.state == State::kDone ? Ms(j.evaluation_ms) : std::string("—")) + "</td></tr>";
  }
  return o + "</table>";
}

Response Form(const Ctx& c, int code, const std::string& error, const std::string& problem,
              const std::string& candidate) {
  std::string o =
      "<h1>Submit a kernel</h1><p>Paste a candidate (a Python file with <code>class "
      "ModelNew</code>) or a model's whole reply (its first fenced code block that "
      "defines <code>ModelNew</code> is evaluated).</p>";
  if (!error.empty()) o += "<p class=\"error\" id=\"submit-error\">" + H(error) + "</p>";
  o += "<form method=\"post\" action=\"/ui/submit\" id=\"submit-form\"><input type=\"hidden\" "
       "name=\"csrf\" value=\"" +
       H(c.Csrf()) + "\"><label>Problem <select name=\"problem\" id=\"problem\">";
  for (const problems::Problem* p :
       c.problems ? c.problems->List() : std::vector<const problems::Problem*>{}) {
    o += "<option value=\"" + H(p->id) + "\"" + (p->id == problem ? " selected" : "") + ">" +
         H(p->id) + "</option>";
  }
  o += "</select></label><label>Kernel or model reply<textarea name=\"candidate\" "
       "id=\"candidate\" rows=\"24\" spellcheck=\"false\" required>" +
       H(candidate) +
       "</textarea></label><button type=\"submit\" id=\"submit\">Evaluate</button></form>";
  return Html(c, code, "Submit", "submit", o);
}

}  // namespace

Response LivePage(const Ctx& c, bool panel_only) {
  const std::string panel = Panel(c, c.live->Live());
  if (panel_only) {
    Response r;
    r.body = panel;
    return r;
  }
  return Html(
      c, 200, "Live", "live",
      "<h1>Live service</h1><div id=\"live\" data-refresh=\"/ui/live/panel\">" + panel + "</div>");
}

Response SubmitPage(const Ctx& c) { return Form(c, 200, "", c.Param("problem"), ""); }

Response SubmitPost(const Ctx& c) {
  const std::string problem = c.form.count("problem") ? c.form.at("problem") : "";
  const std::string candidate = c.form.count("candidate") ? c.form.at("candidate") : "";
  if (candidate.empty()) return Form(c, 400, "The kernel is empty: paste one.", problem, "");
  if (candidate.size() > c.opt.max_candidate_bytes) {
    return Form(c, 413,
                "The kernel is " + std::to_string(candidate.size()) + " bytes; the limit is " +
                    std::to_string(c.opt.max_candidate_bytes) + ".",
                problem, "");
  }
  auto id = c.live->Submit(problem, candidate);
  if (!id.ok()) {
    const int code = id.status().code() == Code::kNotFound          ? 404
                     : id.status().code() == Code::kUnavailable     ? 503
                     : id.status().code() == Code::kInvalidArgument ? 400
                                                                    : 500;
    return Form(c, code, id.status().message(), problem, candidate);
  }
  // The text goes to the store too, so the verdict's page shows it after a restart.
  if (c.store) c.store->PutTexts({{Sha256Hex(candidate), candidate}});
  return Redirect("/ui/jobs/" + *id);
}

Response JobScreen(const Ctx& c, const std::string& id) {
  if (!IsHex64(id)) return NotFound(c, "no job '" + id + "'");
  auto job = c.live->Job(id);
  if (!job.ok()) {
    if (job.status().code() == Code::kNotFound) return NotFound(c, "no job " + id + " here");
    return Failure(c, job.status());
  }
  std::string o = "<h1>Job <code>" + H(Short(id)) + "</code> · " + H(job->problem_id) + "</h1>";
  const State st = job->view.state;
  if (!queue::Settled(st) || !job->view.result) {
    o += "<p class=\"waiting\" id=\"job-state\" data-poll=\"/ui/jobs/" + H(id) + "/state\">" +
         Badge(queue::StateName(st)) + " waiting for the verdict; this page updates itself.</p>";
    if (!job->candidate.empty()) o += "<h2>Kernel</h2>" + SourceView(job->candidate, {});
    return Html(c, 200, "Job " + Short(id), "submit", o);
  }
  const Verdict& v = job->view.result->verdict;
  std::optional<std::string> source;
  if (!job->candidate.empty()) {
    source = job->candidate;
  } else if (auto t = c.store->GetText(v.candidate_hash); t.ok() && t->has_value()) {
    source = **t;
  }
  o += "<p class=\"facts\" id=\"job-state\">" + Badge(queue::StateName(st)) + " by " +
       H(job->view.result->worker) + " · route " + H(job->route) + " · submitted " +
       H(When(job->submitted_at_ms)) + "</p>";
  return Html(c, 200, "Job " + Short(id), "submit",
              o + VerdictBody(c, v, source, "/ui/jobs/" + id));
}

Response JobState(const Ctx& c, const std::string& id) {
  if (!IsHex64(id)) return Json(404, "{\"error\": \"no such job\"}");
  auto job = c.live->Job(id);
  if (!job.ok())
    return Json(job.status().code() == Code::kNotFound ? 404 : 503, "{\"error\": \"no such job\"}");
  json out = {{"id", id}, {"state", queue::StateName(job->view.state)}};
  if (job->view.result) out["status"] = StatusName(job->view.result->verdict.status);
  return Json(200, out.dump());
}

}  // namespace kf::web
