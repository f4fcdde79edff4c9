// service: the reward API's handlers; the contracts are in service.h.
#include "serve/service.h"

#include <algorithm>
#include <optional>

namespace kf::serve::internal {

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

Answer Fail(const Status& s) { return {HttpCode(s), ErrorJson(s.message()), ""}; }

std::chrono::milliseconds Ms(double s) {
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

Service::Service(const ServeOptions& opt, queue::Engine* engine, const ProblemRegistry* problems,
                 RecentJobs* recent, Bdr* bdr)
    : opt_(opt),
      engine_(engine),
      problems_(problems),
      recent_(recent),
      bearer_(MakeCheck(opt.token)),
      rl_(opt.limits, opt.prime_echo, this, bdr) {}

bool Service::Refuse(const httplib::Request& req, httplib::Response& res) {
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

Result<std::vector<queue::JobSpec>> Service::JobsOrRefuse(const std::vector<ItemRequest>& items) {
  if (auto s = AnyFault(items); !s.ok()) return s;
  std::vector<queue::JobSpec> jobs;
  for (const auto& item : items) {
    auto j = problems_->MakeJob(item, opt_.backend, opt_.settings);
    if (!j.ok()) return j.status();
    jobs.push_back(std::move(j.value()));
  }
  return jobs;
}

Result<std::vector<queue::JobSpec>> Service::JobsPerSample(std::vector<ItemRequest>* items) {
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

Status Service::Submit(const std::vector<queue::JobSpec>& jobs,
                       const std::vector<ItemRequest>& items, const std::string& route) {
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!Evaluates(items[i])) continue;
    auto v = engine_->Submit(jobs[i]);
    if (!v.ok()) return v.status();
    recent_->Add(jobs[i], route, NowMs());
  }
  return Status::Ok();
}

std::vector<JobView> Service::WaitAll(const std::vector<queue::JobSpec>& jobs,
                                      const std::vector<ItemRequest>& items,
                                      Clock::time_point deadline) {
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

Result<Clock::time_point> Service::Deadline(const json& body, const httplib::Request& req) {
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

Answer Service::Evaluations(const json& body) {
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

Answer Service::GetEvaluation(const std::string& id, const httplib::Request& req) {
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

Result<Service::PerSample> Service::EvaluatePerSample(const json& body,
                                                      const httplib::Request& req,
                                                      std::vector<ItemRequest>* items,
                                                      const std::string& route) {
  auto deadline = Deadline(body, req);
  if (!deadline.ok()) return deadline.status();
  return EachSample(items, *deadline, route);
}

Result<Service::PerSample> Service::EachSample(std::vector<ItemRequest>* items,
                                               Clock::time_point deadline,
                                               const std::string& route) {
  auto jobs = JobsPerSample(items);
  if (!jobs.ok()) return jobs.status();
  if (auto s = Submit(*jobs, *items, route); !s.ok()) return s;
  auto views = WaitAll(*jobs, *items, deadline);
  return PerSample{std::move(*jobs), std::move(views)};
}

Answer Service::Reward(const json& body, const httplib::Request& req) {
  auto items = ParseItems(body, opt_.limits);
  if (!items.ok()) return Fail(items.status());
  auto done = EvaluatePerSample(body, req, &*items, "reward");
  if (!done.ok()) return Fail(done.status());
  json results = json::array(), rewards = json::array();
  for (size_t i = 0; i < done->views.size(); ++i) {
    results.push_back(ItemResultJson(done->jobs[i].id, done->views[i], (*items)[i]));
    auto r = RewardOf(done->views[i]);
    rewards.push_back(r ? json(*r) : json(nullptr));
  }
  return {200, {{"rewards", rewards}, {"results", results}}, ""};
}

Answer Service::OpenRlhf(const json& body, const httplib::Request& req) {
  auto items = ParseOpenRlhf(body, opt_.limits);
  if (!items.ok()) return Fail(items.status());
  auto done = EvaluatePerSample(body, req, &*items, "openrlhf");
  if (!done.ok()) return Fail(done.status());
  return {200, OpenRlhfResponse(done->views, *items, opt_.missing_reward), ""};
}

Answer Service::Slime(const json& body, const httplib::Request& req) {
  auto item = ParseSlime(body, opt_.limits);
  if (!item.ok()) return Fail(item.status());
  std::vector<ItemRequest> items = {*item};
  auto done = EvaluatePerSample(body, req, &items, "slime");
  if (!done.ok()) return Fail(done.status());
  auto r = RewardOf(done->views[0]);
  double reward = r ? *r : opt_.missing_reward;
  if (req.has_param("full") && req.get_param_value("full") != "0") {
    json out = ItemResultJson(done->jobs[0].id, done->views[0], items[0]);
    out["reward"] = reward;
    out["span"] = SpanJson(*item->span);
    return {200, out, ""};
  }
  return {200, reward, ""};
}

Result<std::vector<JobView>> Service::Run(const std::vector<ItemRequest>& items,
                                          Clock::time_point deadline,
                                          std::vector<std::string>* ids) {
  auto jobs = JobsOrRefuse(items);
  if (!jobs.ok()) return jobs.status();
  if (auto s = Submit(*jobs, items, "rl"); !s.ok()) return s;
  for (const auto& j : *jobs) ids->push_back(j.id);
  return WaitAll(*jobs, items, deadline);
}

Result<std::vector<JobView>> Service::RunEach(std::vector<ItemRequest>* items,
                                              Clock::time_point deadline,
                                              std::vector<std::string>* ids) {
  auto done = EachSample(items, deadline, "rl");
  if (!done.ok()) return done.status();
  for (const auto& j : done->jobs) ids->push_back(j.id);
  return std::move(done->views);
}

Result<JobView> Service::Await(const std::string& id, Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  auto v = engine_->Wait(id, std::max(left, std::chrono::milliseconds(0)));
  if (!v.ok()) return v.status();
  if (v->state == JobView::State::kUnknown) {
    return Status::NotFound("no evaluation with id '" + id + "'");
  }
  return v;
}

Answer Service::Groups(const json& body, const httplib::Request& req) {
  return Synchronous(body, req, [&](Clock::time_point d) { return rl_.Groups(body, d); });
}

Answer Service::TrajectoryReward(const json& body, const httplib::Request& req) {
  return Synchronous(body, req, [&](Clock::time_point d) { return rl_.TrajectoryReward(body, d); });
}

Answer Service::BdrSample(const httplib::Request& req) {
  auto param = [&](const char* k) {
    return req.has_param(k) ? std::optional<std::string>(req.get_param_value(k)) : std::nullopt;
  };
  auto out = rl_.BdrSample(param("n"), param("p"));
  return out.ok() ? Answer{200, std::move(out.value()), ""} : Fail(out.status());
}

Answer Service::BdrStatus() {
  auto out = rl_.BdrStatus();
  return out.ok() ? Answer{200, std::move(out.value()), ""} : Fail(out.status());
}

Answer Service::Problems() {
  json list = json::array();
  for (const Problem* p : problems_->List()) {
    list.push_back({{"id", p->id}, {"hash", p->hash}, {"path", p->path.string()}});
  }
  return {200, {{"problems", list}}, ""};
}

Answer Service::Health(const httplib::Request& req) {
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

Answer Service::Metrics() {
  auto s = engine_ ? engine_->Stats() : Result<queue::EngineStats>(queue::EngineStats{});
  long long overloads = 0;
  auto routes = metrics_.Snapshot(&overloads);
  GateStats front = front_ ? front_->Stats() : GateStats{};
  return {
      200, nullptr,
      RenderMetrics(engine_ ? engine_->Name() : "none", s.ok(), s.ok() ? *s : queue::EngineStats{},
                    routes, overloads, problems_ ? problems_->size() : 0) +
          RenderFrontMetrics(front) + (engine_ ? rl_.Metrics() : std::string())};
}

BearerCheck Service::MakeCheck(const std::string& token) {
  return token.empty() ? BearerCheck() : BearerCheck(token);
}

bool Service::Authorized(const httplib::Request& req) const {
  return bearer_.Allows(req.get_header_value("Authorization"));
}

json Service::TooLarge(uint64_t bytes) const {
  return ErrorJson("the body is " + std::to_string(bytes) + " bytes; the limit is " +
                   std::to_string(opt_.max_body_bytes) + " (--max-body-bytes)");
}

void Service::Write(const Answer& a, httplib::Response& res) {
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

}  // namespace kf::serve::internal
