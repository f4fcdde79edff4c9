#include "queue/redis_conn.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "queue/redis_socket.h"

namespace kf::queue {
namespace {

int MsLeft(RedisClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - RedisClock::now());
  return static_cast<int>(std::max<long long>(0, left.count()));
}

class PlainConn : public RedisConn {
 public:
  PlainConn(Fd fd, std::string endpoint) : fd_(std::move(fd)), endpoint_(std::move(endpoint)) {}

  Status Write(std::string_view bytes, RedisClock::time_point deadline) override {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n > 0) {
        bytes.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (auto s = WaitFd(fd_.get(), POLLOUT, deadline, Who()); !s.ok()) return s;
        continue;
      }
      return Status::Unavailable(Who() + ": " + std::strerror(errno));
    }
    return Status::Ok();
  }

  Result<size_t> Read(char* buf, size_t cap, RedisClock::time_point deadline) override {
    for (;;) {
      ssize_t n = ::recv(fd_.get(), buf, cap, 0);
      if (n > 0) return static_cast<size_t>(n);
      if (n == 0) return Status::Unavailable(Who() + " closed the connection");
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        return Status::Unavailable(Who() + ": " + std::strerror(errno));
      }
      if (auto s = WaitFd(fd_.get(), POLLIN, deadline, Who()); !s.ok()) return s;
    }
  }

 private:
  std::string Who() const { return "Redis at " + endpoint_; }
  Fd fd_;
  std::string endpoint_;
};

// One address: a non-blocking connect bounded by the deadline.
Result<Fd> ConnectOne(const addrinfo* ai, RedisClock::time_point deadline) {
  Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
  if (fd.get() < 0) return Status::Unavailable(std::strerror(errno));
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fd.get(), SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) return fd;
  if (errno != EINPROGRESS) return Status::Unavailable(std::strerror(errno));
  pollfd p{fd.get(), POLLOUT, 0};
  int r;
  do {
    r = ::poll(&p, 1, MsLeft(deadline));
  } while (r < 0 && errno == EINTR);
  if (r == 0) return Status::Timeout("no answer within the timeout");
  int err = 0;
  socklen_t len = sizeof(err);
  if (r < 0 || getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) return Status::Unavailable(std::strerror(err));
  return fd;
}

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Status WaitFd(int fd, short events, RedisClock::time_point deadline, const std::string& what) {
  pollfd p{fd, events, 0};
  for (;;) {
    int r = ::poll(&p, 1, MsLeft(deadline));
    if (r > 0) return Status::Ok();  // ready, or an error the next call reports
    if (r == 0) return Status::Timeout(what + " did not answer within the timeout");
    if (errno != EINTR) return Status::Unavailable(what + ": poll: " + std::strerror(errno));
  }
}

std::string RedisEndpoint(const RedisAddress& a) {
  bool v6 = a.host.find(':') != std::string::npos;
  return (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
}

Result<std::unique_ptr<RedisConn>> OpenRedisConn(const RedisAddress& a,
                                                 RedisClock::time_point deadline) {
  const std::string where = "cannot connect to Redis at " + RedisEndpoint(a);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  int rc = ::getaddrinfo(a.host.c_str(), std::to_string(a.port).c_str(), &hints, &list);
  if (rc != 0) return Status::Unavailable(where + ": " + gai_strerror(rc));
  Status last = Status::Unavailable(where + ": the name has no address");
  Fd fd;
  for (const addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    auto one = ConnectOne(ai, deadline);
    if (one.ok()) {
      fd = std::move(one.value());
      break;
    }
    last = one.status().code() == Code::kTimeout
               ? Status::Timeout(where + ": " + one.status().message())
               : Status::Unavailable(where + ": " + one.status().message());
  }
  ::freeaddrinfo(list);
  if (fd.get() < 0) return last;
  if (a.tls.enabled) return StartTls(std::move(fd), a, deadline);
  return std::unique_ptr<RedisConn>(new PlainConn(std::move(fd), RedisEndpoint(a)));
}

}  // namespace kf::queue
