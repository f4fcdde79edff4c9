// Channel: newline-delimited JSON messages over a stream socket, the only way kforge talks to
// its Python runner processes. Every receive has a deadline (the watchdog lives here, not in
// Python); a peer that dies shows up as kUnavailable, a peer that is silent as kTimeout.
// Not thread-safe: one owner at a time.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "common/fd.h"
#include "common/status.h"

namespace kf {

class Channel {
 public:
  // Messages larger than this are a protocol error (a candidate printing gigabytes into the
  // channel must not exhaust our memory).
  static constexpr size_t kMaxMessageBytes = 64u << 20;

  Channel() = default;
  explicit Channel(UniqueFd fd) : fd_(std::move(fd)) {}

  bool valid() const { return fd_.valid(); }
  int fd() const { return fd_.get(); }

  Status Send(const nlohmann::json& msg);
  // Sends `msg` with `fd` attached (SCM_RIGHTS); the receiver gets its own copy of the fd.
  Status SendWithFd(const nlohmann::json& msg, int fd);
  Result<nlohmann::json> Receive(std::chrono::milliseconds timeout);
  void Close() { fd_.Reset(); }

 private:
  Status WriteAll(const std::string& data);
  UniqueFd fd_;
  std::string buffer_;  // bytes received past the last complete message
};

}  // namespace kf
