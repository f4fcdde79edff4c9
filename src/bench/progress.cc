#include "bench/progress.h"

#include <cstdio>

namespace kf::bench {

std::string Duration(double seconds) {
  if (seconds < 0) seconds = 0;
  long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%lds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  }
  return buf;
}

std::string ProgressLine(const Progress& p, double elapsed_s) {
  char buf[96];
  double pct = p.total > 0 ? 100.0 * p.done / p.total : 100.0;
  std::snprintf(buf, sizeof buf, "%zu/%zu %.0f%%", p.done, p.total, pct);
  std::string line = buf;
  size_t fresh = p.done - p.reused;
  if (fresh > 0 && elapsed_s > 0) {
    double per_min = 60.0 * fresh / elapsed_s;
    std::snprintf(buf, sizeof buf, "  %.1f/min", per_min);
    line += buf;
    line += "  ETA " + Duration((p.total - p.done) * 60.0 / per_min);
  } else if (p.done < p.total) {
    line += "  ETA ?";
  }
  for (const auto& [status, n] : p.by_status) line += "  " + status + " " + std::to_string(n);
  if (p.reused > 0) line += "  (reused " + std::to_string(p.reused) + ")";
  return line;
}

}  // namespace kf::bench
