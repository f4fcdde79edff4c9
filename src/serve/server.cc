#include "serve/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <thread>

#include "serve/auth.h"
#include "serve/front.h"
#include "serve/metrics.h"
#include "serve/recent.h"
#include "serve/ui.h"
#include "web/site.h"

namespace kf::serve {
namespace {
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using queue::JobView;

int HttpCode(const Status& s) {
  switch (s.code()) {
    case Code::kInvalidArgument:
      return 400;
    case Code::kNotFound:
      return 404;
    case Code::kUnavailable:
      return 503;
    case Code::kTimeout:
      return 504;
    default:
      return 500;
  }
}

// A handler's answer before it becomes HTTP.
struct Answer {
  int code = 200;
  json body;
  std::string text;  // sent as text/plain when set (metrics)
};

Answer Fail(const Status& s) { return {HttpCode(s), ErrorJson(s.message()), ""}; }

int64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::chrono::milliseconds Ms(double s) {
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

class Service {
 public:
  Service(const ServeOptions& opt, queue::Engine* engine, const ProblemRegistry* problems,
          RecentJobs* recent)
      : opt_(opt),
        engine_(engine),
        problems_(problems),
        recent_(recent),
        bearer_(MakeCheck(opt.token)) {}

  void SetFront(const FrontServer* front) { front_ = front; }
  // The web UI's pages do their own checks (a login cookie or the bearer token: web/site.h).
  void SetUi(bool ui) { ui_ = ui; }

  // Before the body is read: the token, and a body that cannot be read as one. An answer here
  // leaves the body unread, so the connection is closed after it.
  bool Refuse(const httplib::Request& req, httplib::Response& res) {
    Answer a;
    if (req.path != "/healthz" && !(ui_ && web::Site::Owns(req.path)) && !Authorized(req)) {
      a = {401,
           ErrorJson("missing or wrong bearer token: send 'Authorization: Bearer <token>' "
                     "(the token of kforge serve --token-env)"),
           ""};
      res.set_header("WWW-Authenticate", "Bearer");
    } else if (req.method == "POST" && !req.has_header("Content-Length")) {
      a = req.has_header("Transfer-Encoding")
              ? Answer{411,
                       ErrorJson("chunked request bodies are not accepted: send the JSON "
                                 "body with a Content-Length"),
                       ""}
              : Answer{400,
                       ErrorJson("the request has no body (no Content-Length): POST a "
                                 "JSON object"),
                       ""};
    } else if (req.method == "POST" &&
               req.get_header_value<uint64_t>("Content-Length") > opt_.max_body_bytes) {
      a = {413, TooLarge(req.get_header_value<uint64_t>("Content-Length")), ""};
    } else {
      return false;
    }
    if (auto* ctx = CurrentRequest()) ctx->close = true;
    res.set_header("Connection", "close");
    Write(a, res);
    metrics_.Record("front", a.code, 0);
    return true;
  }

  // Parses the body, runs `f`, records metrics, writes the answer.
  template <class F>
  void Handle(const std::string& route, const httplib::Request& req, httplib::Response& res,
              bool needs_body, F&& f) {
    auto t0 = Clock::now();
    Answer a;
    json body;
    if (req.body.size() > opt_.max_body_bytes) {
      a = {413, TooLarge(req.body.size()), ""};
    } else if (needs_body && req.body.empty()) {
      a = {400, ErrorJson("the body is empty: POST a JSON object"), ""};
    } else if (needs_body && (body = json::parse(req.body, nullptr, false)).is_discarded()) {
      a = {400, ErrorJson("the body is not valid JSON"), ""};
    } else {
      a = f(body);
    }
    Write(a, res);
    metrics_.Record(route, a.code, std::chrono::duration<double>(Clock::now() - t0).count());
  }

  // Every item becomes a job first (so an unknown problem refuses the whole request before
  // anything runs), then all are submitted but those whose answer was not found.
  Result<std::vector<queue::JobSpec>> Submit(const std::vector<ItemRequest>& items,
                                             const std::string& route) {
    std::vector<queue::JobSpec> jobs;
    for (const auto& item : items) {
      auto j = problems_->MakeJob(item, opt_.backend, opt_.settings);
      if (!j.ok()) return j.status();
      jobs.push_back(std::move(j.value()));
    }
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (items[i].span && !items[i].span->found()) continue;
      auto v = engine_->Submit(jobs[i]);
      if (!v.ok()) return v.status();
      recent_->Add(jobs[i], route, NowMs());
    }
    return jobs;
  }

  // Waits for every job until the deadline; a job not done by then stays pending.
  std::vector<JobView> WaitAll(const std::vector<queue::JobSpec>& jobs,
                               const std::vector<ItemRequest>& items, Clock::time_point deadline) {
    std::vector<JobView> out;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (items[i].span && !items[i].span->found()) {
        out.push_back(NoAnswer(jobs[i], *items[i].span));
        continue;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      auto v = engine_->Wait(jobs[i].id, std::max(left, std::chrono::milliseconds(0)));
      JobView view;
      if (v.ok())
        view = *v;
      else
        view.state = JobView::State::kQueued;  // the engine could not be asked: not lost
      out.push_back(std::move(view));
    }
    return out;
  }

  // timeout_s from the body, else the query, else the service's limit; at most that limit.
  Result<Clock::time_point> Deadline(const json& body, const httplib::Request& req) {
    double s = opt_.reward_timeout_s;
    auto from_body = SecondsField(body, "timeout_s");
    if (!from_body.ok()) return from_body.status();
    if (*from_body) {
      s = **from_body;
    } else if (req.has_param("timeout_s")) {
      auto q = ParseSeconds(req.get_param_value("timeout_s"), "timeout_s");
      if (!q.ok()) return Status::Invalid("query parameter " + q.status().message());
      s = *q;
    }
    s = std::min(s, static_cast<double>(opt_.reward_timeout_s));
    return Clock::now() + Ms(s);
  }

  Answer Evaluations(const json& body) {
    auto items = ParseItems(body, opt_.limits);
    if (!items.ok()) return Fail(items.status());
    auto jobs = Submit(*items, "evaluations");
    if (!jobs.ok()) return Fail(jobs.status());
    json ids = json::array(), evals = json::array();
    for (const auto& j : *jobs) {
      ids.push_back(j.id);
      auto v = engine_->Get(j.id);
      evals.push_back(ViewJson(j.id, v.ok() ? *v : JobView{JobView::State::kQueued, {}}));
    }
    json out = {{"ids", ids}, {"evaluations", evals}};
    if (!body.contains("items")) out["id"] = ids[0];
    return {202, out, ""};
  }

  Answer GetEvaluation(const std::string& id, const httplib::Request& req) {
    double wait_s = 0;
    if (req.has_param("wait")) {
      auto w = ParseSeconds(req.get_param_value("wait"), "wait");
      if (!w.ok()) return {400, ErrorJson("query parameter " + w.status().message()), ""};
      wait_s = std::min(*w, static_cast<double>(opt_.max_wait_s));
    }
    auto v = engine_->Wait(id, Ms(wait_s));
    if (!v.ok()) return Fail(v.status());
    if (v->state == JobView::State::kUnknown) {
      return {404, ErrorJson("no evaluation with id '" + id + "'"), ""};
    }
    return {200, ViewJson(id, *v), ""};
  }

  Answer Reward(const json& body, const httplib::Request& req) {
    auto items = ParseItems(body, opt_.limits);
    if (!items.ok()) return Fail(items.status());
    auto deadline = Deadline(body, req);
    if (!deadline.ok()) return Fail(deadline.status());
    auto jobs = Submit(*items, "reward");
    if (!jobs.ok()) return Fail(jobs.status());
    auto views = WaitAll(*jobs, *items, *deadline);
    json results = json::array(), rewards = json::array();
    for (size_t i = 0; i < views.size(); ++i) {
      results.push_back(RewardJson((*jobs)[i].id, views[i]));
      auto r = RewardOf(views[i]);
      rewards.push_back(r ? json(*r) : json(nullptr));
    }
    return {200, {{"rewards", rewards}, {"results", results}}, ""};
  }

  Answer OpenRlhf(const json& body, const httplib::Request& req) {
    auto items = ParseOpenRlhf(body, opt_.limits);
    if (!items.ok()) return Fail(items.status());
    auto deadline = Deadline(body, req);
    if (!deadline.ok()) return Fail(deadline.status());
    auto jobs = Submit(*items, "openrlhf");
    if (!jobs.ok()) return Fail(jobs.status());
    return {200, OpenRlhfResponse(WaitAll(*jobs, *items, *deadline), *items, opt_.missing_reward),
            ""};
  }

  Answer Slime(const json& body, const httplib::Request& req) {
    auto item = ParseSlime(body, opt_.limits);
    if (!item.ok()) return Fail(item.status());
    auto deadline = Deadline(body, req);
    if (!deadline.ok()) return Fail(deadline.status());
    std::vector<ItemRequest> items = {*item};
    auto jobs = Submit(items, "slime");
    if (!jobs.ok()) return Fail(jobs.status());
    auto views = WaitAll(*jobs, items, *deadline);
    auto r = RewardOf(views[0]);
    double reward = r ? *r : opt_.missing_reward;
    if (req.has_param("full") && req.get_param_value("full") != "0") {
      json out = RewardJson((*jobs)[0].id, views[0]);
      out["reward"] = reward;
      out["span"] = SpanJson(*item->span);
      return {200, out, ""};
    }
    return {200, reward, ""};
  }

  Answer Problems() {
    json list = json::array();
    for (const Problem* p : problems_->List()) {
      list.push_back({{"id", p->id}, {"hash", p->hash}, {"path", p->path.string()}});
    }
    return {200, {{"problems", list}}, ""};
  }

  // Open to all (liveness probes carry no secret); the details only with the token.
  Answer Health(const httplib::Request& req) {
    if (engine_ == nullptr) {  // kforge ui: pages over a store, no engine
      json out = {{"ok", true}};
      if (Authorized(req)) out["engine"] = "none";
      return {200, out, ""};
    }
    auto s = engine_->Stats();
    json out = {{"ok", s.ok()}};
    if (Authorized(req)) {
      out["engine"] = engine_->Name();
      out["problems"] = problems_->size();
      out["backend"] = opt_.backend;
      if (s.ok()) {
        out["in_flight"] = s->in_flight;
        out["workers"] = s->workers;
      } else {
        out["error"] = s.status().message();
      }
    }
    return {s.ok() ? 200 : 503, out, ""};
  }

  Answer Metrics() {
    auto s = engine_ ? engine_->Stats() : Result<queue::EngineStats>(queue::EngineStats{});
    long long overloads = 0;
    auto routes = metrics_.Snapshot(&overloads);
    GateStats front = front_ ? front_->Stats() : GateStats{};
    return {200, nullptr,
            RenderMetrics(engine_ ? engine_->Name() : "none", s.ok(),
                          s.ok() ? *s : queue::EngineStats{}, routes, overloads,
                          problems_ ? problems_->size() : 0) +
                RenderFrontMetrics(front)};
  }

  HttpMetrics& metrics() { return metrics_; }
  const BearerCheck& bearer() const { return bearer_; }

 private:
  static BearerCheck MakeCheck(const std::string& token) {
    return token.empty() ? BearerCheck() : BearerCheck(token);
  }
  bool Authorized(const httplib::Request& req) const {
    return bearer_.Allows(req.get_header_value("Authorization"));
  }
  json TooLarge(uint64_t bytes) const {
    return ErrorJson("the body is " + std::to_string(bytes) + " bytes; the limit is " +
                     std::to_string(opt_.max_body_bytes) + " (--max-body-bytes)");
  }
  void Write(const Answer& a, httplib::Response& res) {
    if (a.code == 503) {
      metrics_.CountOverload();
      res.set_header("Retry-After", std::to_string(opt_.retry_after_s));
    }
    res.status = a.code;
    if (!a.text.empty()) {
      res.set_content(a.text, "text/plain; version=0.0.4");
    } else {
      res.set_content(Dump(a.body), "application/json");
    }
  }

  const ServeOptions& opt_;
  queue::Engine* engine_;
  const ProblemRegistry* problems_;
  RecentJobs* recent_;
  const BearerCheck bearer_;
  const FrontServer* front_ = nullptr;
  bool ui_ = false;
  HttpMetrics metrics_;
};

// The reward API (docs/API.md): only with an engine behind it.
void AddApiRoutes(httplib::Server& http, Service& svc) {
  using Req = httplib::Request;
  using Res = httplib::Response;
  http.Get("/v1/problems", [&](const Req& q, Res& r) {
    svc.Handle("problems", q, r, false, [&](const json&) { return svc.Problems(); });
  });
  http.Post("/v1/evaluations", [&](const Req& q, Res& r) {
    svc.Handle("evaluations", q, r, true, [&](const json& b) { return svc.Evaluations(b); });
  });
  http.Get(R"(/v1/evaluations/([^/]+))", [&](const Req& q, Res& r) {
    std::string id = q.matches[1];
    svc.Handle("evaluation", q, r, false, [&](const json&) { return svc.GetEvaluation(id, q); });
  });
  http.Post("/v1/reward", [&](const Req& q, Res& r) {
    svc.Handle("reward", q, r, true, [&](const json& b) { return svc.Reward(b, q); });
  });
  http.Post("/get_reward", [&](const Req& q, Res& r) {
    svc.Handle("openrlhf", q, r, true, [&](const json& b) { return svc.OpenRlhf(b, q); });
  });
  http.Post("/slime/reward", [&](const Req& q, Res& r) {
    svc.Handle("slime", q, r, true, [&](const json& b) { return svc.Slime(b, q); });
  });
}

FrontServer::Options FrontOptions(const ServeOptions& opt) {
  FrontServer::Options f;
  f.gate.max_active = std::max(1, opt.threads);
  f.gate.health_reserve = std::max(1, opt.health_threads);
  f.gate.request_timeout = Ms(opt.request_timeout_s);
  f.gate.idle_timeout = Ms(opt.idle_timeout_s);
  f.gate.retry_after_s = opt.retry_after_s;
  f.gate.max_connections = opt.max_connections;  // FrontServer keeps it within the fd limit
  return f;
}

}  // namespace

Status CheckExposure(const ServeOptions& opt) {
  if (opt.token.empty() && !IsLoopbackHost(opt.host)) {
    return Status::Invalid("--host " + opt.host +
                           " is not a loopback address: anyone who can reach it could submit "
                           "work; give --token-env NAME (clients then send 'Authorization: "
                           "Bearer <token>'), or listen on 127.0.0.1");
  }
  if (!opt.token.empty()) {
    if (auto s = ValidToken(opt.token); !s.ok())
      return Status::Invalid("--token-env: " + s.message());
  }
  return Status::Ok();
}

Status RunServer(const ServeOptions& opt, queue::Engine* engine, const ProblemRegistry* problems,
                 store::Store* store, const std::atomic<bool>& stop,
                 const std::function<void(int)>& on_listening) {
  if (auto s = CheckExposure(opt); !s.ok()) return s;
  RecentJobs recent;
  Service svc(opt, engine, problems, &recent);
  FrontServer http(FrontOptions(opt));
  svc.SetFront(&http);
  // The web UI: the live view and submissions through the engine when there is one.
  std::unique_ptr<UiService> live;
  std::unique_ptr<web::Site> site;
  if (engine) {
    live = std::make_unique<UiService>(
        opt, engine, problems, &svc.metrics(), [&http] { return http.Stats(); }, &recent);
  }
  if (store) {
    site = std::make_unique<web::Site>(UiOptions(opt, &svc.bearer(), engine == nullptr), store,
                                       problems, live.get());
    svc.SetUi(true);
  }
  // One byte over our own limit: our handler then answers 413 with a JSON message.
  http.set_payload_max_length(opt.max_body_bytes + 1);
  // Debian's cpp-httplib listens with a backlog of 5, fixed when it was compiled; a burst of
  // trainer connections then overflows the accept queue and clients see resets. We keep the
  // listening socket and listen on it again with a deep backlog (Linux updates it in place).
  int listen_fd = -1;
  http.set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd = sock;
  });

  using Req = httplib::Request;
  using Res = httplib::Response;
  using HR = httplib::Server::HandlerResponse;
  http.set_pre_routing_handler(
      [&](const Req& q, Res& r) { return svc.Refuse(q, r) ? HR::Handled : HR::Unhandled; });
  // curl and others wait for "100 Continue" before a large body: refuse before it is sent.
  http.set_expect_100_continue_handler(
      [&](const Req& q, Res& r) { return svc.Refuse(q, r) ? r.status : 100; });
  http.Get("/healthz", [&](const Req& q, Res& r) {
    svc.Handle("healthz", q, r, false, [&](const json&) { return svc.Health(q); });
  });
  http.Get("/metrics", [&](const Req& q, Res& r) {
    svc.Handle("metrics", q, r, false, [&](const json&) { return svc.Metrics(); });
  });
  if (site) MountUi(http, site.get(), &svc.metrics());
  if (engine) AddApiRoutes(http, svc);
  const int request_timeout_s = static_cast<int>(opt.request_timeout_s);
  http.set_error_handler([request_timeout_s](const Req& q, Res& r) {
    RequestContext* ctx = CurrentRequest();
    if (ctx && ctx->stream && ctx->stream->timed_out()) {
      r.status = 408;
      r.set_content(
          Dump(ErrorJson("the request body did not arrive within " +
                         std::to_string(request_timeout_s) + " s of the request's first byte")),
          "application/json");
      return;
    }
    if (!r.body.empty()) return;
    std::string msg = r.status == 413   ? "the request body is too large"
                      : r.status == 404 ? "no such route: " + q.method + " " + q.path
                      : r.status == 400 ? "the request could not be read as HTTP/1.1"
                                        : "HTTP error " + std::to_string(r.status);
    r.set_content(Dump(ErrorJson(msg)), "application/json");
  });

  int port = opt.port;
  if (port == 0) {
    port = http.bind_to_any_port(opt.host);
    if (port < 0) return Status::IoError("cannot bind to " + opt.host);
  } else if (!http.bind_to_port(opt.host, port)) {
    return Status::IoError("cannot listen on " + opt.host + ":" + std::to_string(port));
  }
  if (listen_fd >= 0) ::listen(listen_fd, 4096);
  std::atomic<bool> ended{false};
  std::thread watcher([&] {
    while (!stop.load() && !ended.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    http.stop();
  });
  on_listening(port);
  bool ok = http.listen_after_bind();
  ended = true;
  watcher.join();
  return ok ? Status::Ok() : Status::IoError("the HTTP server stopped");
}

}  // namespace kf::serve
