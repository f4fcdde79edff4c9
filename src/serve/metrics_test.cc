#include "serve/metrics.h"

#include <gtest/gtest.h>

namespace kf::serve {
namespace {

TEST(Metrics, PrometheusText) {
  HttpMetrics m;
  m.Record("reward", 200, 0.003);
  m.Record("reward", 503, 0.2);
  m.CountOverload();
  queue::EngineStats s;
  s.queue_depth["build"] = 2;
  s.queue_depth["gpu"] = 1;
  s.workers["gpu"] = 3;
  s.verdicts["ok"] = 5;
  s.stage_ms_sum["build"] = 1500;
  s.stage_count["build"] = 3;
  long long overloads = 0;
  auto routes = m.Snapshot(&overloads);
  std::string t = RenderMetrics("redis", true, s, routes, overloads, 7);
  for (const char* line :
       {"kforge_engine_up{engine=\"redis\"} 1\n", "kforge_queue_depth{queue=\"build\"} 2\n",
        "kforge_workers{role=\"gpu\"} 3\n", "kforge_verdicts_total{status=\"ok\"} 5\n",
        "kforge_stage_seconds_sum{stage=\"build\"} 1.5\n",
        "kforge_stage_seconds_count{stage=\"build\"} 3\n", "kforge_problems 7\n",
        "kforge_overload_total 1\n",
        "kforge_http_requests_total{route=\"reward\",code=\"503\"} 1\n",
        "kforge_http_request_seconds_bucket{route=\"reward\",le=\"0.005\"} 1\n",
        "kforge_http_request_seconds_bucket{route=\"reward\",le=\"+Inf\"} 2\n",
        "# TYPE kforge_http_request_seconds histogram\n"}) {
    EXPECT_NE(t.find(line), std::string::npos) << line << "\nin:\n" << t;
  }
}

TEST(Metrics, FrontCounters) {
  GateStats g;
  g.connections = 12;
  g.active = 3;
  g.refused = 2;
  g.timed_out = 5;
  g.threads = 9;
  std::string t = RenderFrontMetrics(g);
  for (const char* line : {"kforge_http_connections 12\n", "kforge_http_active_requests 3\n",
                           "kforge_http_threads 9\n", "kforge_http_refused_total 2\n",
                           "kforge_http_head_timeouts_total 5\n"}) {
    EXPECT_NE(t.find(line), std::string::npos) << line << "\nin:\n" << t;
  }
}

}  // namespace
}  // namespace kf::serve
