// ui: the web UI (web/site.h) inside the reward service. UiService answers the UI's live view
// from the numbers /metrics shows (the engine's stats, the HTTP metrics, the connection front)
// and the recent jobs, and submits as POST /v1/evaluations does. MountUi routes GET / and
// /ui/... (and POST /ui/...) of the HTTP server to a web::Site.
//
// Thread-safety: UiService may be used from any number of threads.
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>

#include "queue/engine.h"
#include "serve/auth.h"
#include "serve/gate.h"
#include "serve/metrics.h"
#include "serve/problems.h"
#include "serve/recent.h"
#include "serve/server.h"
#include "web/site.h"

namespace kf::serve {

class UiService : public web::LiveService {
 public:
  UiService(const ServeOptions& opt, queue::Engine* engine, const ProblemRegistry* problems,
            const HttpMetrics* metrics, std::function<GateStats()> front, RecentJobs* recent);

  web::LiveStats Live() override;
  Result<std::string> Submit(const std::string& problem_id, const std::string& candidate) override;
  Result<web::JobPage> Job(const std::string& id) override;

 private:
  const ServeOptions& opt_;
  queue::Engine* engine_;
  const ProblemRegistry* problems_;
  const HttpMetrics* metrics_;
  std::function<GateStats()> front_;
  RecentJobs* recent_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

// The Site's options under these serve options: pages need a login when a token is set
// (`bearer` checks it); "ui" mode (read-only) when there is no engine.
web::SiteOptions UiOptions(const ServeOptions& opt, const BearerCheck* bearer, bool read_only);

// Routes GET /, GET /ui..., POST /ui/... to `site`; each answer is counted in `metrics` as
// route "ui".
void MountUi(httplib::Server& http, web::Site* site, HttpMetrics* metrics);

// p in (0, 1]: the upper bound of the latency bucket holding that quantile of `r`'s requests
// (the last finite bound when it lies beyond them all).
double BucketQuantile(const HttpMetrics::Route& r, double p);

}  // namespace kf::serve
