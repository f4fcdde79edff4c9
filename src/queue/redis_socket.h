// redis_socket: what the plain and the TLS connection of redis_conn share (internal to
// src/queue): an owned socket and waiting on it until a deadline.
#pragma once

#include <string>

#include "common/status.h"
#include "queue/redis_conn.h"

namespace kf::queue {

// Closes the descriptor it holds.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Waits until `fd` is ready for `events` (POLLIN, POLLOUT). kTimeout after the deadline, named
// with `what` ("Redis at host:port did not answer within the timeout").
Status WaitFd(int fd, short events, RedisClock::time_point deadline, const std::string& what);

// The TLS handshake on a connected non-blocking socket (redis_tls.cc).
Result<std::unique_ptr<RedisConn>> StartTls(Fd fd, const RedisAddress& a,
                                            RedisClock::time_point deadline);

}  // namespace kf::queue
