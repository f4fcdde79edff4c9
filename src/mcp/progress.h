// progress: a tool's steps as MCP progress notifications that always grow, with a heartbeat.
// A build or a model call can take minutes with no step finished; clients time requests out
// (some reset the timer on each progress notification), so while a step runs the reporter
// sends, every `heartbeat`, a progress between the step reached and the next one (never
// reaching it) and the time the step has taken so far.
//
// Thread-safety: Reach may be called from any thread; the heartbeat runs on its own thread,
// which the destructor stops and joins. Does nothing (no thread) when the call asked for no
// progress.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "mcp/mcp.h"

namespace kf::mcp {

class ProgressReporter {
 public:
  ProgressReporter(const CallContext& ctx, double total,
                   std::chrono::milliseconds heartbeat = std::chrono::seconds(5));
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // `done` steps of `total` are finished; `message` says what happens now ("build"). A
  // `done` not above what was last sent is sent just above it: progress never goes back.
  void Reach(double done, const std::string& message);

 private:
  void Send(double progress, const std::string& message);  // mu_ held
  void Beat();

  const CallContext& ctx_;
  const double total_;
  const std::chrono::milliseconds heartbeat_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                            // guarded by mu_
  double done_ = 0;                              // guarded by mu_
  double sent_ = -1;                             // the last progress sent; guarded by mu_
  std::string message_;                          // guarded by mu_
  std::chrono::steady_clock::time_point since_;  // when done_ was reached; guarded by mu_
  std::thread beat_;
};

// The heartbeat's progress after `elapsed` in a step begun at `done`: grows with time, stays
// below done + 1 (half way after a minute).
double HeartbeatProgress(double done, std::chrono::steady_clock::duration elapsed);

}  // namespace kf::mcp
