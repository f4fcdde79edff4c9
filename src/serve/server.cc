#include "serve/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <thread>

#include "serve/metrics.h"

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

class Service {
 public:
  Service(const ServeOptions& opt, queue::Engine* engine, const ProblemRegistry* problems)
      : opt_(opt), engine_(engine), problems_(problems) {}

  // Parses the body, runs `f`, records metrics, writes the answer.
  template <class F>
  void Handle(const std::string& route, const httplib::Request& req, httplib::Response& res,
              bool needs_body, F&& f) {
    auto t0 = Clock::now();
    Answer a;
    json body;
    if (req.body.size() > opt_.max_body_bytes) {
      a = {413,
           ErrorJson("the body is " + std::to_string(req.body.size()) + " bytes; the limit is " +
                     std::to_string(opt_.max_body_bytes)),
           ""};
    } else if (needs_body && (body = json::parse(req.body, nullptr, false)).is_discarded()) {
      a = {400, ErrorJson("the body is not valid JSON"), ""};
    } else {
      a = f(body);
    }
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
    metrics_.Record(route, a.code, std::chrono::duration<double>(Clock::now() - t0).count());
  }

  // Every item becomes a job first (so an unknown problem refuses the whole request before
  // anything runs), then all are submitted.
  Result<std::vector<queue::JobSpec>> Submit(const std::vector<ItemRequest>& items) {
    std::vector<queue::JobSpec> jobs;
    for (const auto& item : items) {
      auto j = problems_->MakeJob(item, opt_.backend, opt_.settings);
      if (!j.ok()) return j.status();
      jobs.push_back(std::move(j.value()));
    }
    for (const auto& j : jobs) {
      auto v = engine_->Submit(j);
      if (!v.ok()) return v.status();
    }
    return jobs;
  }

  // Waits for every job until the deadline; a job not done by then stays pending.
  std::vector<JobView> WaitAll(const std::vector<queue::JobSpec>& jobs,
                               Clock::time_point deadline) {
    std::vector<JobView> out;
    for (const auto& j : jobs) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      auto v = engine_->Wait(j.id, std::max(left, std::chrono::milliseconds(0)));
      JobView view;
      if (v.ok())
        view = *v;
      else
        view.state = JobView::State::kQueued;  // the engine could not be asked: not lost
      out.push_back(std::move(view));
    }
    return out;
  }

  Clock::time_point Deadline(const json& body, const httplib::Request& req) {
    double s = opt_.reward_timeout_s;
    if (body.is_object() && body.contains("timeout_s") && body["timeout_s"].is_number()) {
      s = body["timeout_s"].get<double>();
    } else if (req.has_param("timeout_s")) {
      s = std::atof(req.get_param_value("timeout_s").c_str());
    }
    s = std::clamp(s, 0.0, static_cast<double>(opt_.reward_timeout_s));
    return Clock::now() + std::chrono::milliseconds(static_cast<long long>(s * 1000));
  }

  Answer Evaluations(const json& body) {
    auto items = ParseItems(body, opt_.limits);
    if (!items.ok()) return Fail(items.status());
    auto jobs = Submit(*items);
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
      const std::string w = req.get_param_value("wait");
      char* end = nullptr;
      wait_s = std::strtod(w.c_str(), &end);
      if (w.empty() || *end != '\0' || wait_s < 0) {
        return {400, ErrorJson("query parameter 'wait' must be a number of seconds >= 0"), ""};
      }
      wait_s = std::min(wait_s, static_cast<double>(opt_.max_wait_s));
    }
    auto v = engine_->Wait(id, std::chrono::milliseconds(static_cast<long long>(wait_s * 1000)));
    if (!v.ok()) return Fail(v.status());
    if (v->state == JobView::State::kUnknown) {
      return {404, ErrorJson("no evaluation with id '" + id + "'"), ""};
    }
    return {200, ViewJson(id, *v), ""};
  }

  Answer Reward(const json& body, const httplib::Request& req) {
    auto items = ParseItems(body, opt_.limits);
    if (!items.ok()) return Fail(items.status());
    auto jobs = Submit(*items);
    if (!jobs.ok()) return Fail(jobs.status());
    auto views = WaitAll(*jobs, Deadline(body, req));
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
    auto jobs = Submit(*items);
    if (!jobs.ok()) return Fail(jobs.status());
    return {200, OpenRlhfResponse(WaitAll(*jobs, Deadline(body, req)), opt_.missing_reward), ""};
  }

  Answer Slime(const json& body, const httplib::Request& req) {
    auto item = ParseSlime(body, opt_.limits);
    if (!item.ok()) return Fail(item.status());
    auto jobs = Submit({*item});
    if (!jobs.ok()) return Fail(jobs.status());
    auto views = WaitAll(*jobs, Deadline(body, req));
    auto r = RewardOf(views[0]);
    double reward = r ? *r : opt_.missing_reward;
    if (req.has_param("full") && req.get_param_value("full") != "0") {
      json out = RewardJson((*jobs)[0].id, views[0]);
      out["reward"] = reward;
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

  Answer Health() {
    auto s = engine_->Stats();
    json out = {{"ok", s.ok()},
                {"engine", engine_->Name()},
                {"problems", problems_->size()},
                {"backend", opt_.backend}};
    if (!s.ok()) {
      out["error"] = s.status().message();
      return {503, out, ""};
    }
    out["in_flight"] = s->in_flight;
    out["workers"] = s->workers;
    return {200, out, ""};
  }

  Answer Metrics() {
    auto s = engine_->Stats();
    long long overloads = 0;
    auto routes = metrics_.Snapshot(&overloads);
    return {200, nullptr,
            RenderMetrics(engine_->Name(), s.ok(), s.ok() ? *s : queue::EngineStats{}, routes,
                          overloads, problems_->size())};
  }

 private:
  const ServeOptions& opt_;
  queue::Engine* engine_;
  const ProblemRegistry* problems_;
  HttpMetrics metrics_;
};

}  // namespace

Status RunServer(const ServeOptions& opt, queue::Engine* engine, const ProblemRegistry* problems,
                 const std::atomic<bool>& stop, const std::function<void(int)>& on_listening) {
  Service svc(opt, engine, problems);
  httplib::Server http;
  const int threads = std::max(1, opt.threads);
  http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  // One byte over our own limit: our handler then answers 413 with a JSON message.
  http.set_payload_max_length(opt.max_body_bytes + 1);
  http.set_keep_alive_max_count(100);
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
  http.Get("/healthz", [&](const Req& q, Res& r) {
    svc.Handle("healthz", q, r, false, [&](const json&) { return svc.Health(); });
  });
  http.Get("/metrics", [&](const Req& q, Res& r) {
    svc.Handle("metrics", q, r, false, [&](const json&) { return svc.Metrics(); });
  });
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
  http.set_error_handler([](const Req& q, Res& r) {
    if (!r.body.empty()) return;
    std::string msg = r.status == 413   ? "the request body is too large"
                      : r.status == 404 ? "no such route: " + q.method + " " + q.path
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
