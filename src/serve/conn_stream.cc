#include "serve/conn_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kf::serve {
namespace {

void Address(const sockaddr_storage& a, std::string& ip, int& port) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof(buf));
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof(buf));
    port = ntohs(v6->sin6_port);
  }
  ip = buf;
}

}  // namespace

ConnStream::ConnStream(int fd, std::string buffered, GateClock::time_point deadline,
                       std::chrono::milliseconds write_timeout)
    : fd_(fd), buf_(std::move(buffered)), deadline_(deadline), write_timeout_(write_timeout) {}

bool ConnStream::WaitFor(short events, GateClock::time_point until) const {
  for (;;) {
    // Rounded up: truncated, 0.9 ms left became 0 and the wait ended before `until`, so a
    // stalled body was answered 400 instead of 408 (seen under load in test_front).
    auto left = std::chrono::ceil<std::chrono::milliseconds>(until - GateClock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1'000'000)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

bool ConnStream::is_readable() const { return off_ < buf_.size() || WaitFor(POLLIN, deadline_); }

bool ConnStream::is_writable() const { return WaitFor(POLLOUT, GateClock::now() + write_timeout_); }

ssize_t ConnStream::read(char* ptr, size_t size) {
  if (off_ < buf_.size()) {
    size_t n = std::min(size, buf_.size() - off_);
    std::memcpy(ptr, buf_.data() + off_, n);
    off_ += n;
    if (off_ == buf_.size()) {
      buf_.clear();
      off_ = 0;
    }
    return static_cast<ssize_t>(n);
  }
  for (;;) {
    ssize_t n = ::recv(fd_, ptr, size, MSG_DONTWAIT);
    if (n >= 0) {
      if (n == 0) failed_ = true;  // the client closed its side
      return n;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) {
      failed_ = true;
      return -1;
    }
    if (!WaitFor(POLLIN, deadline_)) {
      timed_out_ = GateClock::now() >= deadline_;
      failed_ = true;
      return -1;
    }
  }
}

ssize_t ConnStream::write(const char* ptr, size_t size) {
  const auto until = GateClock::now() + write_timeout_;
  for (;;) {
    ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno != EAGAIN || !WaitFor(POLLOUT, until)) {
      failed_ = true;
      return -1;
    }
  }
}

void ConnStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) Address(a, ip, port);
}

void ConnStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) Address(a, ip, port);
}

std::string ConnStream::TakeLeftover() {
  std::string out = buf_.substr(off_);
  buf_.clear();
  off_ = 0;
  return out;
}

}  // namespace kf::serve
