// service: the reward API's handlers (docs/API.md) before and after cpp-httplib's parsing:
// authentication and limits before a body is read, then each route's answer, with metrics.
// Internal to serve (server.cc wires it to the HTTP server); cpp-httplib types appear here.
//
// Thread-safety: every method may be called from any number of handler threads at once.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/clock.h"
#include "serve/auth.h"
#include "serve/front.h"
#include "serve/metrics.h"
#include "serve/recent.h"
#include "serve/rl_routes.h"
#include "serve/server.h"
#include "web/site.h"

namespace kf::serve::internal {
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

std::chrono::milliseconds Ms(double s) {
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

class Service : public Evaluations {
 public:
  // `bdr` (borrowed; null: no BDR) as in RunServer.
  Service(const ServeOptions& opt, queue::Engine* engine, const ProblemRegistry* problems,
          RecentJobs* recent, Bdr* bdr)
      : opt_(opt),
        engine_(engine),
        problems_(problems),
        recent_(recent),
        bearer_(MakeCheck(opt.token)),
        rl_(opt.limits, opt.prime_echo, this, bdr) {}

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

  // The job of every item, made before anything is submitted: the first bad item (a fault, an
  // unknown problem) refuses the request and nothing runs. /v1/evaluations and the RL routes.
  Result<std::vector<queue::JobSpec>> JobsOrRefuse(const std::vector<ItemRequest>& items) {
    if (auto s = AnyFault(items); !s.ok()) return s;
    std::vector<queue::JobSpec> jobs;
    for (const auto& item : items) {
      auto j = problems_->MakeJob(item, opt_.backend, opt_.settings);
      if (!j.ok()) return j.status();
      jobs.push_back(std::move(j.value()));
    }
    return jobs;
  }

  // The routes that answer each sample (/v1/reward, /get_reward, /slime/reward): the job of every
  // item, an empty one where the item is refused. An item whose job cannot be made (an unknown
  // problem, a problem's text this service refuses) is refused alone; the request only when
  // every item is, before anything runs.
  Result<std::vector<queue::JobSpec>> JobsPerSample(std::vector<ItemRequest>* items) {
    std::vector<queue::JobSpec> jobs(items->size());
    for (size_t i = 0; i < items->size(); ++i) {
      ItemRequest& item = (*items)[i];
      if (item.fault && item.fault->kind == SampleFault::Kind::kRefused) continue;
      auto j = problems_->MakeJob(item, opt_.backend, opt_.settings);
      if (j.ok()) {
        jobs[i] = std::move(j.value());
      } else {
        item.fault = SampleFault{SampleFault::Kind::kRefused, j.status()};
        item.candidate.clear();
      }
    }
    if (auto s = AllRefused(*items); !s.ok()) return s;
    return jobs;
  }

  // Submits the jobs of the items that are evaluated (Evaluates).
  Status Submit(const std::vector<queue::JobSpec>& jobs, const std::vector<ItemRequest>& items,
                const std::string& route) {
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (!Evaluates(items[i])) continue;
      auto v = engine_->Submit(jobs[i]);
      if (!v.ok()) return v.status();
      recent_->Add(jobs[i], route, NowMs());
    }
    return Status::Ok();
  }

  // Waits for every job until the deadline; a job not done by then stays pending.
  std::vector<JobView> WaitAll(const std::vector<queue::JobSpec>& jobs,
                               const std::vector<ItemRequest>& items, Clock::time_point deadline) {
    std::vector<JobView> out;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (!Evaluates(items[i])) {
        out.push_back(Unevaluated(jobs[i], items[i]));
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
    auto jobs = JobsOrRefuse(*items);
    if (!jobs.ok()) return Fail(jobs.status());
    if (auto s = Submit(*jobs, *items, "evaluations"); !s.ok()) return Fail(s);
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
    auto jobs = JobsPerSample(&*items);
    if (!jobs.ok()) return Fail(jobs.status());
    if (auto s = Submit(*jobs, *items, "reward"); !s.ok()) return Fail(s);
    auto views = WaitAll(*jobs, *items, *deadline);
    json results = json::array(), rewards = json::array();
    for (size_t i = 0; i < views.size(); ++i) {
      results.push_back(ItemResultJson((*jobs)[i].id, views[i], (*items)[i]));
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
    auto jobs = JobsPerSample(&*items);
    if (!jobs.ok()) return Fail(jobs.status());
    if (auto s = Submit(*jobs, *items, "openrlhf"); !s.ok()) return Fail(s);
    return {200, OpenRlhfResponse(WaitAll(*jobs, *items, *deadline), *items, opt_.missing_reward),
            ""};
  }

  Answer Slime(const json& body, const httplib::Request& req) {
    auto item = ParseSlime(body, opt_.limits);
    if (!item.ok()) return Fail(item.status());
    auto deadline = Deadline(body, req);
    if (!deadline.ok()) return Fail(deadline.status());
    std::vector<ItemRequest> items = {*item};
    auto jobs = JobsPerSample(&items);
    if (!jobs.ok()) return Fail(jobs.status());
    if (auto s = Submit(*jobs, items, "slime"); !s.ok()) return Fail(s);
    auto views = WaitAll(*jobs, items, *deadline);
    auto r = RewardOf(views[0]);
    double reward = r ? *r : opt_.missing_reward;
    if (req.has_param("full") && req.get_param_value("full") != "0") {
      json out = ItemResultJson((*jobs)[0].id, views[0], items[0]);
      out["reward"] = reward;
      out["span"] = SpanJson(*item->span);
      return {200, out, ""};
    }
    return {200, reward, ""};
  }

  // Evaluations, for the RL routes (rl_routes.h). Their jobs show in the live view as "rl".
  Result<std::vector<JobView>> Run(const std::vector<ItemRequest>& items,
                                   Clock::time_point deadline,
                                   std::vector<std::string>* ids) override {
    auto jobs = JobsOrRefuse(items);
    if (!jobs.ok()) return jobs.status();
    if (auto s = Submit(*jobs, items, "rl"); !s.ok()) return s;
    for (const auto& j : *jobs) ids->push_back(j.id);
    return WaitAll(*jobs, items, deadline);
  }
  Result<JobView> Await(const std::string& id, Clock::time_point deadline) override {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto v = engine_->Wait(id, std::max(left, std::chrono::milliseconds(0)));
    if (!v.ok()) return v.status();
    if (v->state == JobView::State::kUnknown) {
      return Status::NotFound("no evaluation with id '" + id + "'");
    }
    return v;
  }

  // POST /v1/groups and /v1/trajectory-reward wait like /v1/reward (timeout_s).
  template <class F>
  Answer Synchronous(const json& body, const httplib::Request& req, F&& f) {
    auto deadline = Deadline(body, req);
    if (!deadline.ok()) return Fail(deadline.status());
    Result<json> out = f(*deadline);
    return out.ok() ? Answer{200, std::move(out.value()), ""} : Fail(out.status());
  }
  Answer Groups(const json& body, const httplib::Request& req) {
    return Synchronous(body, req, [&](Clock::time_point d) { return rl_.Groups(body, d); });
  }
  Answer TrajectoryReward(const json& body, const httplib::Request& req) {
    return Synchronous(body, req,
                       [&](Clock::time_point d) { return rl_.TrajectoryReward(body, d); });
  }
  Answer BdrSample(const httplib::Request& req) {
    auto param = [&](const char* k) {
      return req.has_param(k) ? std::optional<std::string>(req.get_param_value(k)) : std::nullopt;
    };
    auto out = rl_.BdrSample(param("n"), param("p"));
    return out.ok() ? Answer{200, std::move(out.value()), ""} : Fail(out.status());
  }
  Answer BdrStatus() {
    auto out = rl_.BdrStatus();
    return out.ok() ? Answer{200, std::move(out.value()), ""} : Fail(out.status());
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
                RenderFrontMetrics(front) + (engine_ ? rl_.Metrics() : std::string())};
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
  RlRoutes rl_;
};

}  // namespace kf::serve::internal
