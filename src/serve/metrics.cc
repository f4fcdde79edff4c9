#include "serve/metrics.h"

#include <sstream>

namespace kf::serve {
namespace {

std::string Num(double v) {
  std::ostringstream o;
  o.precision(10);
  o << v;
  return o.str();
}

void Header(std::ostringstream& o, const char* name, const char* type, const char* help) {
  o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

// A metric of one sample without labels: its header and its value, the name written once.
void One(std::ostringstream& o, const char* name, const char* type, const char* help,
         long long value) {
  Header(o, name, type, help);
  o << name << " " << value << "\n";
}

}  // namespace

void HttpMetrics::Record(const std::string& route, int code, double seconds) {
  std::lock_guard<std::mutex> g(mu_);
  Route& r = routes_[route];
  r.by_code[code] += 1;
  r.count += 1;
  r.sum_s += seconds;
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    if (seconds <= kLatencyBuckets[i]) r.buckets[i] += 1;
  }
}

std::map<std::string, HttpMetrics::Route> HttpMetrics::Snapshot(long long* overloads) const {
  std::lock_guard<std::mutex> g(mu_);
  if (overloads) *overloads = overloads_;
  return routes_;
}

std::string RenderMetrics(const std::string& engine, bool engine_ok, const queue::EngineStats& s,
                          const std::map<std::string, HttpMetrics::Route>& routes,
                          long long overloads, size_t problems) {
  std::ostringstream o;
  Header(o, "kforge_engine_up", "gauge", "1 when the job engine answered (Redis reachable)");
  o << "kforge_engine_up{engine=\"" << engine << "\"} " << (engine_ok ? 1 : 0) << "\n";
  Header(o, "kforge_queue_depth", "gauge", "jobs waiting or running, by stage");
  for (const auto& [q, n] : s.queue_depth)
    o << "kforge_queue_depth{queue=\"" << q << "\"} " << n << "\n";
  One(o, "kforge_jobs_in_flight", "gauge", "jobs submitted and not finished", s.in_flight);
  One(o, "kforge_jobs_capacity", "gauge", "jobs in flight beyond which submissions get 503",
      s.capacity);
  Header(o, "kforge_workers", "gauge", "live workers by role");
  for (const auto& [r, n] : s.workers) o << "kforge_workers{role=\"" << r << "\"} " << n << "\n";
  Header(o, "kforge_verdicts_total", "counter", "verdicts written, by status");
  for (const auto& [st, n] : s.verdicts) {
    o << "kforge_verdicts_total{status=\"" << st << "\"} " << n << "\n";
  }
  Header(o, "kforge_stage_seconds", "summary", "time spent in each verdict stage");
  for (const auto& [st, ms] : s.stage_ms_sum) {
    auto it = s.stage_count.find(st);
    long long n = it == s.stage_count.end() ? 0 : it->second;
    o << "kforge_stage_seconds_sum{stage=\"" << st << "\"} " << Num(ms / 1000.0) << "\n";
    o << "kforge_stage_seconds_count{stage=\"" << st << "\"} " << n << "\n";
  }
  One(o, "kforge_jobs_requeued_total", "counter",
      "jobs whose record vanished from Redis, queued again from this server's copy", s.requeued);
  One(o, "kforge_jobs_lost_total", "counter",
      "jobs whose record vanished from Redis with no copy here: answered lost", s.lost);
  One(o, "kforge_redis_data_losses_total", "counter",
      "times this server found Redis's epoch key gone or changed (Redis lost its data)",
      s.data_losses);
  One(o, "kforge_problems", "gauge", "registered problems", static_cast<long long>(problems));
  One(o, "kforge_overload_total", "counter", "requests answered 503 because queues were full",
      overloads);
  Header(o, "kforge_http_requests_total", "counter", "HTTP requests by route and status code");
  for (const auto& [route, r] : routes) {
    for (const auto& [code, n] : r.by_code) {
      o << "kforge_http_requests_total{route=\"" << route << "\",code=\"" << code << "\"} " << n
        << "\n";
    }
  }
  Header(o, "kforge_http_request_seconds", "histogram", "HTTP request latency by route");
  for (const auto& [route, r] : routes) {
    for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
      o << "kforge_http_request_seconds_bucket{route=\"" << route << "\",le=\""
        << Num(kLatencyBuckets[i]) << "\"} " << r.buckets[i] << "\n";
    }
    o << "kforge_http_request_seconds_bucket{route=\"" << route << "\",le=\"+Inf\"} " << r.count
      << "\n";
    o << "kforge_http_request_seconds_sum{route=\"" << route << "\"} " << Num(r.sum_s) << "\n";
    o << "kforge_http_request_seconds_count{route=\"" << route << "\"} " << r.count << "\n";
  }
  return o.str();
}

std::string RenderFrontMetrics(const GateStats& g) {
  std::ostringstream o;
  One(o, "kforge_http_connections", "gauge", "open HTTP connections (idle, reading, handled)",
      g.connections);
  One(o, "kforge_http_active_requests", "gauge", "requests being handled (one thread each)",
      g.active);
  One(o, "kforge_http_threads", "gauge", "request threads, busy or idle", g.threads);
  One(o, "kforge_http_refused_total", "counter",
      "requests answered 503 before a handler: --threads requests in hand, or connections full",
      g.refused);
  One(o, "kforge_http_head_timeouts_total", "counter",
      "requests whose head did not arrive within --request-timeout-s (408)", g.timed_out);
  return o.str();
}

}  // namespace kf::serve
