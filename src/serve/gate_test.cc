#include "serve/gate.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

namespace kf::serve {
namespace {

using namespace std::chrono_literals;

// The client's end of a socket pair whose other end the gate owns.
struct Client {
  int fd = -1;
  Client() = default;
  Client(const Client&) = delete;
  Client(Client&& o) noexcept : fd(o.fd) { o.fd = -1; }
  ~Client() {
    if (fd >= 0) ::close(fd);
  }
  void Send(const std::string& s) const {
    ASSERT_EQ(::send(fd, s.data(), s.size(), 0), (ssize_t)s.size());
  }
  // What arrives until `want` is in it, the peer closes, or 10 s pass (a liveness bound only).
  std::string ReadUntil(const std::string& want) const {
    std::string got;
    auto until = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < until && got.find(want) == std::string::npos) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
};

Client Connect(Gate& g) {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  g.Add(sv[0]);
  Client c;
  c.fd = sv[1];
  return c;
}

const std::string kGet = "GET /v1/problems HTTP/1.1\r\nHost: x\r\n\r\n";
const std::string kHealth = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

// A handler that answers "ok <served>" and keeps the connection, handing back what followed
// the head.
After Answer(Conn& c) {
  size_t end = c.buffered.find("\r\n\r\n") + 4;
  std::string body = "ok " + std::to_string(c.served);
  std::string out =
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  ::send(c.fd, out.data(), out.size(), MSG_NOSIGNAL);
  return After{true, c.buffered.substr(end)};
}

TEST(Gate, AdmitsWholeHeadsAndKeepsConnections) {
  Gate g(GateOptions{}, Answer);
  Client c = Connect(g);
  c.Send(kGet);
  EXPECT_NE(c.ReadUntil("ok 0").find("ok 0"), std::string::npos);
  // Two pipelined requests, the second in the leftover of the first.
  c.Send(kGet + kGet);
  std::string got = c.ReadUntil("ok 2");
  EXPECT_NE(got.find("ok 1"), std::string::npos) << got;
  EXPECT_NE(got.find("ok 2"), std::string::npos) << got;
  // A head split over many sends.
  for (char ch : kGet) c.Send(std::string(1, ch));
  EXPECT_NE(c.ReadUntil("ok 3").find("ok 3"), std::string::npos);
}

TEST(Gate, ASlowHeadGets408AndNoThread) {
  GateOptions o;
  o.request_timeout = 300ms;
  std::atomic<int> handled{0};
  Gate g(o, [&](Conn& c) {
    ++handled;
    return Answer(c);
  });
  Client c = Connect(g);
  c.Send("GET /v1/pro");  // and nothing more
  std::string got = c.ReadUntil("\r\n\r\n{");
  EXPECT_EQ(got.rfind("HTTP/1.1 408 ", 0), 0u) << got;
  EXPECT_NE(got.find("did not arrive within 0.3 s"), std::string::npos) << got;
  EXPECT_EQ(handled.load(), 0);
  EXPECT_EQ(g.Stats().timed_out, 1);
}

TEST(Gate, IdleConnectionsAreClosed) {
  GateOptions o;
  o.idle_timeout = 200ms;
  Gate g(o, Answer);
  Client c = Connect(g);
  EXPECT_EQ(c.ReadUntil("never"), "");  // EOF, nothing sent
  // The gate closes the socket, then counts it gone: the client may see EOF first.
  auto until = std::chrono::steady_clock::now() + 10s;
  while (g.Stats().connections != 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(g.Stats().connections, 0);
}

// A gate with one request thread, taken by a request that waits (a synchronous reward) until
// Release(); health requests are answered at once.
struct HeldGate {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  Gate g;
  Client busy;
  static GateOptions OneThread(GateOptions o) {
    o.max_active = 1;
    return o;
  }
  explicit HeldGate(GateOptions o)
      : g(OneThread(o),
          [this](Conn& c) {
            if (!c.health) released.wait();
            return Answer(c);
          }),
        busy(Connect(g)) {
    busy.Send(kGet);
    while (g.Stats().active < 1) std::this_thread::sleep_for(5ms);
  }
  void Release() { release.set_value(); }
};

TEST(Gate, FullMeans503ButHealthHasItsOwnThreads) {
  GateOptions o;
  o.retry_after_s = 7;
  HeldGate h(o);
  Gate& g = h.g;
  Client refused = Connect(g);
  refused.Send(kGet);
  std::string got = refused.ReadUntil("}");
  EXPECT_EQ(got.rfind("HTTP/1.1 503 ", 0), 0u) << got;
  EXPECT_NE(got.find("Retry-After: 7\r\n"), std::string::npos) << got;
  EXPECT_NE(got.find("1 requests are being handled"), std::string::npos) << got;
  Client health = Connect(g);
  health.Send(kHealth);
  EXPECT_NE(health.ReadUntil("ok 0").find("ok 0"), std::string::npos);
  h.Release();
  EXPECT_NE(h.busy.ReadUntil("ok 0").find("ok 0"), std::string::npos);
  EXPECT_EQ(g.Stats().refused, 1);
}

// A handler returns a moment after its client has the answer (logging, cleanup). A client
// that sends its next request at once, at exactly max_active clients, must be admitted, not
// refused on a count that is about to drop.
TEST(Gate, ANextRequestWaitsForAHandlerThatIsReturning) {
  GateOptions o;
  o.max_active = 1;
  Gate g(o, [&](Conn& c) {
    After a = Answer(c);
    std::this_thread::sleep_for(150ms);  // answered, not yet returned
    return a;
  });
  for (int i = 0; i < 3; ++i) {
    Client c = Connect(g);
    c.Send(kGet);
    std::string got = c.ReadUntil("ok 0");
    EXPECT_NE(got.find("ok 0"), std::string::npos) << "request " << i << ": " << got;
  }
  EXPECT_EQ(g.Stats().refused, 0);
}

// A client that gives up while its request waits for a handler is let go: its connection is
// closed, not kept until the wait ends.
TEST(Gate, AWaitingClientThatHangsUpIsLetGo) {
  GateOptions o;
  o.admit_wait = 5s;
  HeldGate h(o);
  Gate& g = h.g;
  {
    Client gone = Connect(g);
    gone.Send(kGet);
    std::this_thread::sleep_for(50ms);  // its head is whole and waiting
  }
  auto until = std::chrono::steady_clock::now() + 3s;
  while (g.Stats().connections != 1 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(g.Stats().connections, 1);
  EXPECT_EQ(g.Stats().refused, 0);
  h.Release();
  EXPECT_NE(h.busy.ReadUntil("ok 0").find("ok 0"), std::string::npos);
}

TEST(Gate, HeadsTooLargeOrWithoutCrlfAreRefused) {
  GateOptions o;
  o.max_head_bytes = 256;
  Gate g(o, Answer);
  Client big = Connect(g);
  big.Send("GET / HTTP/1.1\r\nX-A: " + std::string(400, 'a') + "\r\n\r\n");
  EXPECT_EQ(big.ReadUntil("}").rfind("HTTP/1.1 431 ", 0), 0u);
  Client lf = Connect(g);
  lf.Send("GET / HTTP/1.1\nHost: x\n\n");
  std::string got = lf.ReadUntil("}");
  EXPECT_EQ(got.rfind("HTTP/1.1 400 ", 0), 0u) << got;
  EXPECT_NE(got.find("CRLF"), std::string::npos);
}

TEST(Gate, ManySlowClientsDoNotStarveHealth) {
  GateOptions o;
  o.request_timeout = 60s;
  o.max_active = 4;
  Gate g(o, Answer);
  std::vector<Client> slow;
  for (int i = 0; i < 200; ++i) {
    slow.push_back(Connect(g));
    slow.back().Send("POST /v1/reward HTTP/1.1\r\nContent-Le");
  }
  Client health = Connect(g);
  health.Send(kHealth);
  EXPECT_NE(health.ReadUntil("ok 0").find("ok 0"), std::string::npos);
  EXPECT_EQ(g.Stats().connections, 201);
  EXPECT_EQ(g.Stats().refused, 0);
  g.Shutdown();  // closes the slow ones
  EXPECT_EQ(g.Stats().connections, 0);
  EXPECT_EQ(slow[0].ReadUntil("never"), "");
}

TEST(Gate, BeyondMaxConnectionsNewOnesGet503) {
  GateOptions o;
  o.max_connections = 2;
  Gate g(o, Answer);
  Client a = Connect(g), b = Connect(g), c = Connect(g);
  std::string got = c.ReadUntil("}");
  EXPECT_EQ(got.rfind("HTTP/1.1 503 ", 0), 0u) << got;
  EXPECT_NE(got.find("2 connections"), std::string::npos);
}

TEST(Gate, HealthHeads) {
  EXPECT_TRUE(IsHealthHead("GET /healthz HTTP/1.1\r\n\r\n"));
  EXPECT_TRUE(IsHealthHead("GET /metrics?x=1 HTTP/1.1\r\n\r\n"));
  EXPECT_FALSE(IsHealthHead("POST /healthz HTTP/1.1\r\n\r\n"));
  EXPECT_FALSE(IsHealthHead("GET /healthzz HTTP/1.1\r\n\r\n"));
  EXPECT_FALSE(IsHealthHead("GET /v1/reward HTTP/1.1\r\n\r\n"));
}

}  // namespace
}  // namespace kf::serve
