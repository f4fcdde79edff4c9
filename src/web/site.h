// web: kforge's web UI, served by `kforge serve` at / and by `kforge ui` over a store alone:
// bench runs and their metrics (compare two), per-problem leaderboards across runs and models,
// verdict pages (the kernel with its diagnostics at their lines, trials, timing, the rule of a
// cheat, a diff against another candidate), the live reward service and submissions.
// Server-rendered HTML, one small script and one style sheet compiled into the binary; nothing
// is fetched from elsewhere. No HTTP library here: a Request in, a Response out, so every page
// and every refusal is tested without a socket (serve/ui.cc adapts cpp-httplib).
//
// Safety: every text from the store, a candidate or a request is escaped (html.h), and pages
// carry a Content-Security-Policy that runs no inline script. Only the store and the registered
// problems are read: a sample's path is shown, never opened. See docs/SECURITY.md.
//
// Thread-safety: Handle may be called from any number of threads at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "problems/registry.h"
#include "queue/job.h"
#include "store/store.h"

namespace kf::web {

struct Request {
  std::string method;  // "GET", "POST"
  std::string path;    // decoded, without the query ("/ui/runs/3")
  std::string query;   // raw, after '?' ("a=1&b=2")
  std::string body;    // POST: application/x-www-form-urlencoded
  // Headers ("" when absent).
  std::string authorization, cookie, host, origin, sec_fetch_site, forwarded_proto;
};

struct Response {
  int code = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// What the live view shows of the reward service: the numbers of /metrics, and recent jobs.
struct RouteStats {
  std::string route;
  long long count = 0, errors = 0;          // errors: answered 4xx or 5xx
  double mean_s = 0, p50_s = 0, p95_s = 0;  // p50/p95 from the histogram's bucket bounds
};
struct RecentJob {
  std::string id, problem_id, route;
  int64_t submitted_at_ms = 0;
  queue::JobView::State state = queue::JobView::State::kUnknown;
  std::string status;            // when done
  std::optional<double> reward;  // when done (none for infra_error)
  double evaluation_ms = 0;      // the verdict's stages, summed
};
struct LiveStats {
  std::string engine, backend;
  bool engine_ok = true;
  std::string engine_error;
  queue::EngineStats stats;
  size_t problems = 0;
  std::vector<RouteStats> routes;
  long long overloads = 0;
  long long connections = 0, active_requests = 0, handler_threads = 0, refused = 0,
            head_timeouts = 0;
  double uptime_s = 0;
  std::vector<RecentJob> recent;  // newest first
};
// One job the service holds, for its page.
struct JobPage {
  std::string id, problem_id, route;
  int64_t submitted_at_ms = 0;
  queue::JobView view;
  std::string candidate;  // "" when the service did not keep it
};

// The running reward service, as the UI needs it (serve/ui.cc implements it over the engine);
// absent under `kforge ui`.
class LiveService {
 public:
  virtual ~LiveService() = default;
  virtual LiveStats Live() = 0;
  // Submits a candidate for a registered problem and returns the job's id. kNotFound for an
  // unknown problem, kUnavailable when the queues are full, kInvalidArgument for a bad text.
  virtual Result<std::string> Submit(const std::string& problem_id,
                                     const std::string& candidate) = 0;
  virtual Result<JobPage> Job(const std::string& id) = 0;  // kNotFound when not held
};

struct SiteOptions {
  // "serve": everything, submissions included; "ui": read-only, over a store alone.
  std::string mode = "serve";
  // Checks an Authorization header's value ("Bearer <token>") in constant time; unset when no
  // token is configured, and then no page asks for one.
  std::function<bool(const std::string& authorization)> bearer_ok;
  // Without a token the UI is for this machine only: requests whose Host header names anything
  // but localhost, 127.x.y.z or [::1] are refused (a DNS-rebinding site cannot read pages).
  bool loopback_host_check = true;
  std::chrono::seconds session_ttl{std::chrono::hours(12)};  // a login lasts this long
  size_t max_candidate_bytes = 1 << 20;                      // as the API's limit
  std::function<int64_t()> now_s;  // seconds since the epoch (tests set it); default: the clock
};

class Site {
 public:
  // `store` is required; `problems` and `live` may be null (then no reference sources from the
  // registry, no live view and no submissions).
  Site(SiteOptions opt, store::Store* store, const problems::Registry* problems, LiveService* live);
  ~Site();
  Site(const Site&) = delete;
  Site& operator=(const Site&) = delete;

  Response Handle(const Request& req);

  // Whether `path` is the UI's: "/" and everything under "/ui/".
  static bool Owns(const std::string& path);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kf::web
