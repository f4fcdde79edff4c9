#include "serve/gate.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace kf::serve {
namespace {

using std::chrono::milliseconds;

// Idle handler threads wait this long for work before they end (a few stay).
constexpr auto kThreadIdle = std::chrono::seconds(30);
constexpr int kThreadsKept = 8;
constexpr size_t kMaxDrainBytes = 1 << 20;

const char* Reason(int code) {
  switch (code) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Service Unavailable";
  }
}

// A whole answer of our own, sent without a handler: small enough for any socket buffer.
std::string Canned(int code, const std::string& message, int retry_after_s) {
  const std::string body = nlohmann::json{{"error", message}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out =
      "HTTP/1.1 " + std::to_string(code) + " " + Reason(code) +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n";
  if (code == 503) out += "Retry-After: " + std::to_string(retry_after_s) + "\r\n";
  return out + "\r\n" + body;
}

void SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return;  // best effort: the client is gone or not reading
    off += static_cast<size_t>(n);
  }
}

std::string Seconds(milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

}  // namespace

bool IsHealthHead(const std::string& head) {
  if (head.compare(0, 4, "GET ") != 0) return false;
  size_t end = head.find_first_of(" ?\r\n", 4);
  if (end == std::string::npos) return false;
  const std::string path = head.substr(4, end - 4);
  return path == "/healthz" || path == "/metrics";
}

Gate::Gate(GateOptions opt, Handler handler) : opt_(opt), handler_(std::move(handler)) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  poller_ = std::thread([this] { PollLoop(); });
}

Gate::~Gate() {
  Shutdown();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void Gate::Wake() {
  uint64_t one = 1;
  ssize_t r = ::write(wake_fd_, &one, sizeof(one));
  (void)r;  // the counter is non-zero already if this fails (EAGAIN)
}

void Gate::Add(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (connections_.load() >= opt_.max_connections) {
    ++refused_;
    SendAll(fd, Canned(503,
                       "the service holds " + std::to_string(opt_.max_connections) +
                           " connections already; retry later",
                       opt_.retry_after_s));
    ::close(fd);
    return;
  }
  ++connections_;
  Slot s;
  s.fd = fd;
  s.deadline = GateClock::now() + opt_.idle_timeout;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!stopping_) {
      inbox_.push_back(std::move(s));
      fd = -1;
    }
  }
  if (fd >= 0) {
    ::close(fd);
    --connections_;
    return;
  }
  Wake();
}

void Gate::Refuse(Slot& s, int code, const std::string& message, GateClock::time_point now) {
  SendAll(s.fd, Canned(code, message, opt_.retry_after_s));
  ::shutdown(s.fd, SHUT_WR);
  s.draining = true;
  s.waiting = false;
  s.buf.clear();
  s.deadline = now + opt_.drain_timeout;
}

bool Gate::Drop(Slot& s) {
  ::close(s.fd);
  --connections_;
  return false;
}

bool Gate::ReadHead(Slot& s, GateClock::time_point now, bool& whole) {
  char tmp[16384];
  for (;;) {
    ssize_t n = ::recv(s.fd, tmp, sizeof(tmp), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return Drop(s);
    if (n < 0) break;
    if (!s.begun) {
      s.begun = true;
      s.deadline = now + opt_.request_timeout;
    }
    s.buf.append(tmp, static_cast<size_t>(n));
    if (s.buf.size() > opt_.max_head_bytes) break;
  }
  size_t end = s.buf.find("\r\n\r\n");
  if (end == std::string::npos || end + 4 > opt_.max_head_bytes) {
    if (s.buf.size() > opt_.max_head_bytes) {
      Refuse(s, 431,
             "the request line and headers are longer than " + std::to_string(opt_.max_head_bytes) +
                 " bytes",
             now);
      return true;
    }
    if (s.buf.find("\n\n") != std::string::npos) {
      Refuse(s, 400, "the request's header lines must end with CRLF", now);
      return true;
    }
    if (now < s.deadline) return true;
    if (!s.begun) return Drop(s);  // idle: no request began
    ++timed_out_;
    Refuse(s, 408,
           "the request line and headers did not arrive within " + Seconds(opt_.request_timeout) +
               " of the request's first byte",
           now);
    return true;
  }
  whole = true;
  return true;
}

bool Gate::Advance(Slot& s, GateClock::time_point now) {
  if (s.draining) {
    char tmp[16384];
    for (;;) {
      ssize_t n = ::recv(s.fd, tmp, sizeof(tmp), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return Drop(s);
      if (n < 0) break;
      s.drained_bytes += static_cast<size_t>(n);
      if (s.drained_bytes > kMaxDrainBytes) return Drop(s);
    }
    return now < s.deadline ? true : Drop(s);
  }
  // A whole head waiting for a handler reads nothing more (its body is the handler's).
  if (!s.waiting) {
    bool whole = false;
    if (!ReadHead(s, now, whole)) return false;
    if (!whole) return true;
  }
  Conn c;
  c.health = IsHealthHead(s.buf);
  auto& active = c.health ? active_health_ : active_;
  const long long cap = c.health ? opt_.health_reserve : opt_.max_active;
  if (active.load() >= cap) {
    if (!s.waiting) {
      s.waiting = true;
      s.admit_by = now + opt_.admit_wait;
    }
    if (now < s.admit_by) return true;  // a handler's return wakes the poll thread
    ++refused_;
    Refuse(s, 503,
           std::string("the service is busy: ") + std::to_string(cap) +
               (c.health ? " health requests" : " requests") + " are being handled; retry after " +
               std::to_string(opt_.retry_after_s) + " s",
           now);
    return true;
  }
  c.fd = s.fd;
  c.buffered = std::move(s.buf);
  c.deadline = s.deadline;
  c.served = s.served;
  Dispatch(std::move(c));
  return false;
}

void Gate::PollLoop() {
  std::vector<Slot> slots;
  std::vector<pollfd> pfds;
  for (;;) {
    const size_t before = slots.size();
    {
      std::lock_guard<std::mutex> g(mu_);
      if (stopping_) break;
      for (auto& s : inbox_) slots.push_back(std::move(s));
      inbox_.clear();
    }
    auto now = GateClock::now();
    // A returned connection may hold its next request whole already (pipelining).
    for (size_t i = before; i < slots.size();) {
      if (!slots[i].buf.empty() && !slots[i].draining && !Advance(slots[i], now)) {
        slots[i] = std::move(slots.back());
        slots.pop_back();
      } else {
        ++i;
      }
    }
    auto next = now + std::chrono::seconds(1);
    for (const auto& s : slots) next = std::min(next, s.waiting ? s.admit_by : s.deadline);
    int timeout_ms = static_cast<int>(
        std::max<long long>(0, std::chrono::duration_cast<milliseconds>(next - now).count() + 1));
    pfds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    // A waiting slot reads nothing, so it is not polled for input (POLLHUP still comes).
    for (const auto& s : slots)
      pfds.push_back(pollfd{s.fd, static_cast<short>(s.waiting ? 0 : POLLIN), 0});
    int r = ::poll(pfds.data(), pfds.size(), timeout_ms);
    if (r < 0 && errno != EINTR) break;
    if (pfds[0].revents & POLLIN) {
      uint64_t v;
      ssize_t n = ::read(wake_fd_, &v, sizeof(v));
      (void)n;
    }
    now = GateClock::now();
    // Visit from the back so that removing (swap with the last) keeps pfds[i + 1] = slots[i].
    for (size_t i = slots.size(); i-- > 0;) {
      const short revents = pfds[i + 1].revents;
      bool keep = true;
      if (slots[i].waiting && (revents & (POLLHUP | POLLERR))) {
        keep = Drop(slots[i]);  // the client is gone: nobody to answer
      } else if (revents != 0 || slots[i].waiting || now >= slots[i].deadline) {
        // Waiting slots are looked at on every wake: a handler that returned makes room.
        keep = Advance(slots[i], now);
      }
      if (!keep) {
        slots[i] = std::move(slots.back());
        slots.pop_back();
      }
    }
  }
  std::lock_guard<std::mutex> g(mu_);
  for (auto& s : inbox_) slots.push_back(std::move(s));
  inbox_.clear();
  for (auto& s : slots) Drop(s);
}

void Gate::Dispatch(Conn c) {
  ++(c.health ? active_health_ : active_);
  std::lock_guard<std::mutex> g(mu_);
  tasks_.push_back(std::move(c));
  // Every admitted request gets a thread now: an idle one, or a new one.
  if (tasks_.size() > static_cast<size_t>(idle_threads_)) {
    ++threads_;
    std::thread([this] { HandlerLoop(); }).detach();
  } else {
    work_cv_.notify_one();
  }
}

void Gate::HandlerLoop() {
  for (;;) {
    Conn c;
    {
      std::unique_lock<std::mutex> lk(mu_);
      ++idle_threads_;
      bool woke = work_cv_.wait_for(lk, kThreadIdle, [&] { return stopping_ || !tasks_.empty(); });
      --idle_threads_;
      if (tasks_.empty()) {
        if (stopping_ || (!woke && threads_ > kThreadsKept)) {
          --threads_;
          threads_cv_.notify_all();
          return;
        }
        continue;
      }
      c = std::move(tasks_.front());
      tasks_.pop_front();
    }
    After a;
    try {
      a = handler_(c);
    } catch (...) {
      a = After{};  // the connection is closed; the handler answered what it could
    }
    --(c.health ? active_health_ : active_);
    Returned(std::move(c), std::move(a));
  }
}

void Gate::Returned(Conn c, After a) {
  Slot s;
  s.fd = c.fd;
  s.served = c.served + 1;
  auto now = GateClock::now();
  if (a.keep) {
    s.buf = std::move(a.leftover);
    s.begun = !s.buf.empty();
    s.deadline = now + (s.begun ? opt_.request_timeout : opt_.idle_timeout);
  } else {
    ::shutdown(s.fd, SHUT_WR);
    s.draining = true;
    s.deadline = now + opt_.drain_timeout;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!stopping_) {
      inbox_.push_back(std::move(s));
      s.fd = -1;
    }
  }
  if (s.fd >= 0) {
    Drop(s);  // shutting down: the gate takes no connection back
    return;
  }
  Wake();
}

void Gate::Shutdown() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  Wake();
  if (poller_.joinable()) poller_.join();
  std::unique_lock<std::mutex> lk(mu_);
  threads_cv_.wait(lk, [&] { return threads_ == 0; });
  for (auto& s : inbox_) Drop(s);
  inbox_.clear();
}

GateStats Gate::Stats() const {
  GateStats s;
  s.connections = connections_.load();
  s.active = active_.load() + active_health_.load();
  s.refused = refused_.load();
  s.timed_out = timed_out_.load();
  std::lock_guard<std::mutex> g(mu_);
  s.threads = threads_;
  return s;
}

}  // namespace kf::serve
