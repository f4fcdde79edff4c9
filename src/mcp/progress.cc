#include "mcp/progress.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace kf::mcp {

double HeartbeatProgress(double done, std::chrono::steady_clock::duration elapsed) {
  double s = std::chrono::duration<double>(elapsed).count();
  return done + s / (s + 60.0);
}

ProgressReporter::ProgressReporter(const CallContext& ctx, double total,
                                   std::chrono::milliseconds heartbeat)
    : ctx_(ctx), total_(total), heartbeat_(heartbeat), since_(std::chrono::steady_clock::now()) {
  if (ctx_.wants_progress()) beat_ = std::thread([this] { Beat(); });
}

ProgressReporter::~ProgressReporter() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (beat_.joinable()) beat_.join();
}

void ProgressReporter::Send(double progress, const std::string& message) {
  if (progress <= sent_) progress = std::nextafter(sent_, std::numeric_limits<double>::infinity());
  sent_ = progress;
  ctx_.Progress(progress, total_, message);
}

void ProgressReporter::Reach(double done, const std::string& message) {
  if (!ctx_.wants_progress()) return;
  std::lock_guard<std::mutex> g(mu_);
  done_ = done;
  message_ = message;
  since_ = std::chrono::steady_clock::now();
  Send(done, message);
}

void ProgressReporter::Beat() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (cv_.wait_for(lock, heartbeat_, [this] { return stop_; })) break;
    // Nothing reached yet, or the last step: nothing to say that would not pass `total`.
    if (message_.empty() || done_ >= total_) continue;
    auto elapsed = std::chrono::steady_clock::now() - since_;
    char secs[32];
    std::snprintf(secs, sizeof secs, " (%.0f s)", std::chrono::duration<double>(elapsed).count());
    Send(HeartbeatProgress(done_, elapsed), message_ + secs);
  }
}

}  // namespace kf::mcp
