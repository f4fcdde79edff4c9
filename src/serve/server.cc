#include "serve/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <thread>

#include "serve/front.h"
#include "serve/recent.h"
#include "serve/service.h"
#include "serve/ui.h"
#include "web/site.h"

namespace kf::serve {
namespace {
using internal::Ms;
using internal::Service;
using nlohmann::json;

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
  http.Post("/v1/groups", [&](const Req& q, Res& r) {
    svc.Handle("groups", q, r, true, [&](const json& b) { return svc.Groups(b, q); });
  });
  http.Post("/v1/trajectory-reward", [&](const Req& q, Res& r) {
    svc.Handle("trajectory", q, r, true, [&](const json& b) { return svc.TrajectoryReward(b, q); });
  });
  http.Get("/v1/bdr/sample", [&](const Req& q, Res& r) {
    svc.Handle("bdr_sample", q, r, false, [&](const json&) { return svc.BdrSample(q); });
  });
  http.Get("/v1/bdr", [&](const Req& q, Res& r) {
    svc.Handle("bdr", q, r, false, [&](const json&) { return svc.BdrStatus(); });
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
                 const std::function<void(int)>& on_listening, Bdr* bdr) {
  if (auto s = CheckExposure(opt); !s.ok()) return s;
  RecentJobs recent;
  Service svc(opt, engine, problems, &recent, bdr);
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
