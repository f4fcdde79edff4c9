#include "serve/ui.h"

#include "common/clock.h"

namespace kf::serve {
namespace {

using Clock = std::chrono::steady_clock;

// The raw query of a request target ("/ui/x?a=1" -> "a=1").
std::string QueryOf(const httplib::Request& q) {
  const size_t at = q.target.find('?');
  if (at != std::string::npos) return q.target.substr(at + 1);
  // Without the target, the parsed parameters again (values re-encoded).
  std::string out;
  for (const auto& [k, v] : q.params) {
    out += (out.empty() ? "" : "&") + httplib::detail::encode_query_param(k) + "=" +
           httplib::detail::encode_query_param(v);
  }
  return out;
}

}  // namespace

double BucketQuantile(const HttpMetrics::Route& r, double p) {
  if (r.count == 0) return 0;
  const double want = p * static_cast<double>(r.count);
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    if (static_cast<double>(r.buckets[i]) >= want) return kLatencyBuckets[i];
  }
  return kLatencyBuckets.back();
}

UiService::UiService(const ServeOptions& opt, queue::Engine* engine,
                     const ProblemRegistry* problems, const HttpMetrics* metrics,
                     std::function<GateStats()> front, RecentJobs* recent)
    : opt_(opt),
      engine_(engine),
      problems_(problems),
      metrics_(metrics),
      front_(std::move(front)),
      recent_(recent) {}

web::LiveStats UiService::Live() {
  web::LiveStats s;
  s.engine = engine_->Name();
  s.backend = opt_.backend;
  s.problems = problems_->size();
  auto st = engine_->Stats();
  s.engine_ok = st.ok();
  if (st.ok()) {
    s.stats = *st;
  } else {
    s.engine_error = st.status().message();
  }
  for (const auto& [route, r] : metrics_->Snapshot(&s.overloads)) {
    web::RouteStats rs;
    rs.route = route;
    rs.count = r.count;
    for (const auto& [code, n] : r.by_code) rs.errors += code >= 400 ? n : 0;
    rs.mean_s = r.count ? r.sum_s / static_cast<double>(r.count) : 0;
    rs.p50_s = BucketQuantile(r, 0.5);
    rs.p95_s = BucketQuantile(r, 0.95);
    s.routes.push_back(rs);
  }
  const GateStats g = front_ ? front_() : GateStats{};
  s.connections = g.connections;
  s.active_requests = g.active;
  s.handler_threads = g.threads;
  s.refused = g.refused;
  s.head_timeouts = g.timed_out;
  s.uptime_s = std::chrono::duration<double>(Clock::now() - started_).count();
  // Each recent job's state from the engine (in Redis mode one lookup each: 30 at most).
  for (const auto& e : recent_->Newest(30)) {
    web::RecentJob j;
    j.id = e.id;
    j.problem_id = e.problem_id;
    j.route = e.route;
    j.submitted_at_ms = e.submitted_at_ms;
    auto v = engine_->Get(e.id);
    if (v.ok()) {
      j.state = v->state;
      if (v->result) {
        const Verdict& verdict = v->result->verdict;
        j.status = StatusName(verdict.status);
        j.reward = verdict.reward;
        for (const auto& stage : verdict.stages) j.evaluation_ms += stage.ms;
      }
    }
    s.recent.push_back(std::move(j));
  }
  return s;
}

Result<std::string> UiService::Submit(const std::string& problem_id, const std::string& candidate) {
  ItemRequest item;
  item.problem = problem_id;
  item.candidate = candidate;
  item.field = "problem";
  if (problems_->Find(problem_id) == nullptr) {
    return Status::NotFound("unknown problem '" + problem_id + "': pick a registered one");
  }
  auto job = problems_->MakeJob(item, opt_.backend, opt_.settings);
  if (!job.ok()) return job.status();
  auto v = engine_->Submit(*job);
  if (!v.ok()) return v.status();
  recent_->Add(*job, "ui", NowMs());
  return job->id;
}

Result<web::JobPage> UiService::Job(const std::string& id) {
  auto v = engine_->Get(id);
  if (!v.ok()) return v.status();
  if (v->state == queue::JobView::State::kUnknown) {
    return Status::NotFound("no job " + id + " in this service");
  }
  web::JobPage p;
  p.id = id;
  p.view = *v;
  if (auto e = recent_->Find(id)) {
    p.problem_id = e->problem_id;
    p.route = e->route;
    p.submitted_at_ms = e->submitted_at_ms;
    p.candidate = e->candidate;
  } else if (v->result) {
    p.problem_id = v->result->verdict.problem_id;
  }
  return p;
}

web::SiteOptions UiOptions(const ServeOptions& opt, const BearerCheck* bearer, bool read_only) {
  web::SiteOptions o;
  o.mode = read_only ? "ui" : "serve";
  if (bearer && bearer->enabled()) {
    o.bearer_ok = [bearer](const std::string& h) { return bearer->Allows(h); };
  }
  o.max_candidate_bytes = opt.limits.max_candidate_bytes;
  return o;
}

void MountUi(httplib::Server& http, web::Site* site, HttpMetrics* metrics) {
  auto handle = [site, metrics](const httplib::Request& q, httplib::Response& res) {
    const auto t0 = Clock::now();
    web::Request w;
    w.method = q.method;
    w.path = q.path;
    w.query = QueryOf(q);
    w.body = q.body;
    w.authorization = q.get_header_value("Authorization");
    w.cookie = q.get_header_value("Cookie");
    w.host = q.get_header_value("Host");
    w.origin = q.get_header_value("Origin");
    w.sec_fetch_site = q.get_header_value("Sec-Fetch-Site");
    w.forwarded_proto = q.get_header_value("X-Forwarded-Proto");
    web::Response a = site->Handle(w);
    res.status = a.code;
    for (const auto& [k, v] : a.headers) res.set_header(k.c_str(), v);
    res.set_content(a.body, a.content_type.c_str());
    metrics->Record("ui", a.code, std::chrono::duration<double>(Clock::now() - t0).count());
  };
  http.Get("/", handle);
  http.Get(R"(/ui(/.*)?)", handle);
  http.Post(R"(/ui/.*)", handle);
}

}  // namespace kf::serve
