#include "serve/front.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>

namespace kf::serve {
namespace {

// As many descriptors as the system lets us have: every connection, slow or idle, holds one.
long long RaiseFdLimit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 1024;
  if (r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);
    ::getrlimit(RLIMIT_NOFILE, &r);
  }
  return r.rlim_cur == RLIM_INFINITY ? (1LL << 20) : static_cast<long long>(r.rlim_cur);
}

// Descriptors beyond connections: the engine's store, runner pipes, Redis, logs.
constexpr long long kFdsKept = 512;

FrontServer::Options WithinFdLimit(FrontServer::Options o) {
  o.gate.max_connections =
      std::max<long long>(16, std::min(o.gate.max_connections, RaiseFdLimit() - kFdsKept));
  return o;
}

thread_local RequestContext* tls_request = nullptr;

// Runs each accepted connection's task at once on the accept thread: the task only hands the
// socket to the gate. Shutting the queue down (cpp-httplib does when listening ends) shuts the
// gate down: requests in hand are finished first.
class InlineQueue : public httplib::TaskQueue {
 public:
  explicit InlineQueue(Gate* gate) : gate_(gate) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { gate_->Shutdown(); }

 private:
  Gate* gate_;
};

}  // namespace

RequestContext* CurrentRequest() { return tls_request; }

FrontServer::FrontServer(const Options& opt)
    : opt_(WithinFdLimit(opt)), gate_(opt_.gate, [this](Conn& c) { return Serve(c); }) {
  new_task_queue = [this] { return new InlineQueue(&gate_); };
  // What cpp-httplib advertises in Keep-Alive headers; the gate enforces both.
  set_keep_alive_max_count(opt_.max_requests_per_connection);
  set_keep_alive_timeout(std::max<time_t>(1, opt_.gate.idle_timeout.count() / 1000));
  set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.get_header_value("Connection") == "close") res.headers.erase("Keep-Alive");
  });
}

FrontServer::~FrontServer() { gate_.Shutdown(); }

bool FrontServer::process_and_close_socket(socket_t sock) {
  // An answer leaves in more than one write (the head, then the body): without TCP_NODELAY,
  // Nagle's algorithm holds the second until the client's delayed ACK comes (40 ms on Linux).
  int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  gate_.Add(sock);
  return true;
}

After FrontServer::Serve(Conn& c) {
  ConnStream strm(c.fd, std::move(c.buffered), c.deadline, opt_.write_timeout);
  RequestContext ctx;
  ctx.stream = &strm;
  tls_request = &ctx;
  const bool last = !is_running() || c.served + 1 >= opt_.max_requests_per_connection;
  bool closed = false;
  bool ok = process_request(strm, last, closed, nullptr);
  tls_request = nullptr;
  After a;
  a.keep = ok && !closed && !last && !ctx.close && !strm.failed();
  if (a.keep) a.leftover = strm.TakeLeftover();
  return a;
}

}  // namespace kf::serve
