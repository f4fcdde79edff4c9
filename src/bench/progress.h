// bench progress: the one-line summary of a running bench (done/total, rate, ETA, statuses).
// Pure formatting; the bench command decides when and where to print it (rewritten in place on
// a terminal, a plain line every few seconds otherwise).
#pragma once

#include <map>
#include <string>

namespace kf::bench {

struct Progress {
  size_t total = 0;
  size_t done = 0;
  size_t reused = 0;  // of done, answered from the store
  std::map<std::string, size_t> by_status;
};

// "37/120 31%  14.2/min  ETA 5m51s  ok 20 incorrect 9 compile_error 8 (reused 12)".
// Rate and ETA count only samples evaluated in this run, since reused ones cost nothing.
std::string ProgressLine(const Progress& p, double elapsed_s);

// "5m51s", "1h02m", "12s".
std::string Duration(double seconds);

}  // namespace kf::bench
