// metrics: counters of the HTTP side and the Prometheus text of GET /metrics.
//
// Thread-safety: HttpMetrics may be updated from any number of threads.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>

#include "queue/job.h"
#include "serve/gate.h"

namespace kf::serve {

// Upper bounds (seconds) of the request-latency histogram's buckets; +Inf is implied.
inline constexpr std::array<double, 10> kLatencyBuckets = {0.001, 0.005, 0.01, 0.05, 0.1,
                                                           0.5,   1,     5,    30,   120};

class HttpMetrics {
 public:
  struct Route {
    std::map<int, long long> by_code;
    std::array<long long, kLatencyBuckets.size()> buckets{};  // cumulative counts
    long long count = 0;
    double sum_s = 0;
  };
  void Record(const std::string& route, int code, double seconds);
  void CountOverload() {
    std::lock_guard<std::mutex> g(mu_);
    ++overloads_;
  }
  std::map<std::string, Route> Snapshot(long long* overloads) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Route> routes_;  // guarded by mu_
  long long overloads_ = 0;              // guarded by mu_
};

// The whole /metrics page. `engine_ok` false: Redis (or the engine) could not be asked, and
// kforge_engine_up is 0.
std::string RenderMetrics(const std::string& engine, bool engine_ok, const queue::EngineStats& s,
                          const std::map<std::string, HttpMetrics::Route>& routes,
                          long long overloads, size_t problems);

// The connection front's part of /metrics (gate.h): connections, requests in hand, handler
// threads, refusals and head timeouts.
std::string RenderFrontMetrics(const GateStats& g);

}  // namespace kf::serve
