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

int HttpCode(const Status& s);

// A handler's answer before it becomes HTTP.
struct Answer {
  int code = 200;
  json body;
  std::string text;  // sent as text/plain when set (metrics)
};

Answer Fail(const Status& s);

std::chrono::milliseconds Ms(double s);

class Service : public Evaluations {
 public:
  // `bdr` (borrowed; null: no BDR) as in RunServer.
  Service(const ServeOptions& opt, queue::Engine* engine, const ProblemRegistry* problems,
          RecentJobs* recent, Bdr* bdr);

  void SetFront(const FrontServer* front) { front_ = front; }
  // The web UI's pages do their own checks (a login cookie or the bearer token: web/site.h).
  void SetUi(bool ui) { ui_ = ui; }

  // Before the body is read: the token, and a body that cannot be read as one. An answer here
  // leaves the body unread, so the connection is closed after it.
  bool Refuse(const httplib::Request& req, httplib::Response& res);

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
  Result<std::vector<queue::JobSpec>> JobsOrRefuse(const std::vector<ItemRequest>& items);

  // The routes that answer each sample (/v1/reward, /get_reward, /slime/reward): the job of every
  // item, an empty one where the item is refused. An item whose job cannot be made (an unknown
  // problem, a problem's text this service refuses) is refused alone; the request only when
  // every item is, before anything runs.
  Result<std::vector<queue::JobSpec>> JobsPerSample(std::vector<ItemRequest>* items);

  // Submits the jobs of the items that are evaluated (Evaluates).
  Status Submit(const std::vector<queue::JobSpec>& jobs, const std::vector<ItemRequest>& items,
                const std::string& route);

  // Waits for every job until the deadline; a job not done by then stays pending.
  std::vector<JobView> WaitAll(const std::vector<queue::JobSpec>& jobs,
                               const std::vector<ItemRequest>& items, Clock::time_point deadline);

  // timeout_s from the body, else the query, else the service's limit; at most that limit.
  Result<Clock::time_point> Deadline(const json& body, const httplib::Request& req);

  // The routes that answer each sample: the deadline, a job per sample (JobsPerSample), their
  // submission under `route`, and every job's view once done or at the deadline.
  struct PerSample {
    std::vector<queue::JobSpec> jobs;
    std::vector<JobView> views;
  };
  Result<PerSample> EvaluatePerSample(const json& body, const httplib::Request& req,
                                      std::vector<ItemRequest>* items, const std::string& route);
  // The same until a deadline already known (RunEach: /v1/groups).
  Result<PerSample> EachSample(std::vector<ItemRequest>* items, Clock::time_point deadline,
                               const std::string& route);

  Answer Evaluations(const json& body);
  Answer GetEvaluation(const std::string& id, const httplib::Request& req);
  Answer Reward(const json& body, const httplib::Request& req);
  Answer OpenRlhf(const json& body, const httplib::Request& req);
  Answer Slime(const json& body, const httplib::Request& req);

  // Evaluations, for the RL routes (rl_routes.h). Their jobs show in the live view as "rl".
  Result<std::vector<JobView>> Run(const std::vector<ItemRequest>& items,
                                   Clock::time_point deadline,
                                   std::vector<std::string>* ids) override;
  Result<std::vector<JobView>> RunEach(std::vector<ItemRequest>* items, Clock::time_point deadline,
                                       std::vector<std::string>* ids) override;
  Result<JobView> Await(const std::string& id, Clock::time_point deadline) override;

  // POST /v1/groups and /v1/trajectory-reward wait like /v1/reward (timeout_s).
  template <class F>
  Answer Synchronous(const json& body, const httplib::Request& req, F&& f) {
    auto deadline = Deadline(body, req);
    if (!deadline.ok()) return Fail(deadline.status());
    Result<json> out = f(*deadline);
    return out.ok() ? Answer{200, std::move(out.value()), ""} : Fail(out.status());
  }
  Answer Groups(const json& body, const httplib::Request& req);
  Answer TrajectoryReward(const json& body, const httplib::Request& req);
  Answer BdrSample(const httplib::Request& req);
  Answer BdrStatus();

  Answer Problems();

  // Open to all (liveness probes carry no secret); the details only with the token.
  Answer Health(const httplib::Request& req);

  Answer Metrics();

  HttpMetrics& metrics() { return metrics_; }
  const BearerCheck& bearer() const { return bearer_; }

 private:
  static BearerCheck MakeCheck(const std::string& token);
  bool Authorized(const httplib::Request& req) const;
  json TooLarge(uint64_t bytes) const;
  void Write(const Answer& a, httplib::Response& res);

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
