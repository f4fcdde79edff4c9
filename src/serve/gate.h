// gate: the connections of the reward service, before and between requests. One thread reads
// the request heads of every open connection with poll(), under a deadline for the whole head,
// so a slow client costs a file descriptor, not a thread. A complete head is admitted to a
// handler thread (started on demand), or refused at once with 503 and Retry-After when
// `max_active` requests are in hand already. /healthz and /metrics are admitted apart from the
// rest (`health_reserve` of their own), so slow clients, long polls and synchronous rewards
// never starve them. Between keep-alive requests the connection is back with the gate.
//
// Thread-safety: Add, Stats and Shutdown may be called from any thread; the handler runs on
// handler threads, one connection each.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kf::serve {

using GateClock = std::chrono::steady_clock;

struct GateOptions {
  // Requests other than /healthz and /metrics handled at once. Each holds a thread while its
  // body arrives, while it runs and while it waits (a synchronous reward or a long poll waits
  // minutes), so this is the trainers' concurrency the service takes; beyond it, 503.
  int max_active = 1024;
  int health_reserve = 16;  // /healthz and /metrics handled at once, apart from max_active
  // A request's head and body must have arrived this long after its first byte (a client that
  // sends a byte every few seconds gets 408, whatever the gap between bytes).
  std::chrono::milliseconds request_timeout{30'000};
  std::chrono::milliseconds idle_timeout{10'000};  // a connection with no request begun closes
  std::chrono::milliseconds drain_timeout{2'000};  // reading what a refused client still sends
  size_t max_head_bytes = 64 << 10;                // request line and headers; beyond, 431
  long long max_connections = 10'000;              // open ones; a new one beyond gets 503
  int retry_after_s = 5;                           // told with every 503
  // A whole head that finds `max_active` (or the health reserve) full waits this long for a
  // handler to return before its 503: a handler returns a moment after its client has the
  // answer, so a client that sends its next request at once must not meet a stale count.
  std::chrono::milliseconds admit_wait{500};
};

// A connection whose request head has arrived whole, handed to the handler.
struct Conn {
  int fd = -1;
  std::string buffered;            // what was read: the head and perhaps some of the body
  GateClock::time_point deadline;  // the whole request (the body too) must have arrived by then
  bool health = false;             // GET /healthz or GET /metrics
  size_t served = 0;               // requests answered on this connection before this one
};

// What the handler did with the connection.
struct After {
  bool keep = false;     // keep-alive: the gate waits for the connection's next request
  std::string leftover;  // bytes read past the request: the next one's start
};

struct GateStats {
  long long connections = 0;  // open: with the gate or with a handler
  long long active = 0;       // requests in handler threads (health ones included)
  long long refused = 0;      // answered 503 because max_active (or the reserve) was full
  long long timed_out = 0;    // heads that missed their deadline (408)
  long long threads = 0;      // handler threads, busy or idle
};

class Gate {
 public:
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  using Handler = std::function<After(Conn&)>;
  Gate(GateOptions opt, Handler handler);
  ~Gate();  // Shutdown()

  // Takes ownership of a newly accepted socket.
  void Add(int fd);
  // Stops reading and closes the connections the gate holds; requests in handler threads are
  // finished first (their connections then close). Idempotent.
  void Shutdown();
  GateStats Stats() const;

 private:
  // A connection held by the poll thread: reading a request head, or draining what a client
  // we answered and closed on still sends (so that our answer is not lost to a reset).
  struct Slot {
    int fd = -1;
    std::string buf;
    bool draining = false;
    bool begun = false;    // a byte of the request has arrived: `deadline` is the head's
    bool waiting = false;  // the head is whole, every handler slot taken: until `admit_by`
    GateClock::time_point deadline;
    GateClock::time_point admit_by;
    size_t served = 0;
    size_t drained_bytes = 0;
  };
  // What the poll thread does with a slot once something happened; false: it is gone.
  bool Advance(Slot& s, GateClock::time_point now);
  // Closes the slot's connection; false (what Advance returns for a slot that is gone).
  bool Drop(Slot& s);
  // Reads what the client sent into the slot's head; false: the slot is gone (closed). `whole`:
  // the head arrived complete (else it is still coming, or the slot was refused: 400/408/431).
  bool ReadHead(Slot& s, GateClock::time_point now, bool& whole);
  void Refuse(Slot& s, int code, const std::string& message, GateClock::time_point now);
  void PollLoop();
  void Dispatch(Conn c);
  void HandlerLoop();
  void Returned(Conn c, After a);  // a handler thread is done with a connection
  void Wake();

  const GateOptions opt_;
  const Handler handler_;
  int wake_fd_ = -1;  // eventfd: new connections, returned ones, shutdown

  mutable std::mutex mu_;
  std::condition_variable work_cv_;     // tasks_ gained one, or stopping_
  std::condition_variable threads_cv_;  // a handler thread ended
  std::deque<Conn> tasks_;              // guarded by mu_: admitted, not yet picked up
  std::vector<Slot> inbox_;             // guarded by mu_: for the poll thread (new, returned)
  int idle_threads_ = 0;                // guarded by mu_
  int threads_ = 0;                     // guarded by mu_
  bool stopping_ = false;               // guarded by mu_

  std::atomic<long long> connections_{0};
  std::atomic<long long> active_{0};  // admitted, not health
  std::atomic<long long> active_health_{0};
  std::atomic<long long> refused_{0};
  std::atomic<long long> timed_out_{0};
  std::thread poller_;
};

// Whether a complete request head is GET /healthz or GET /metrics (query strings allowed).
bool IsHealthHead(const std::string& head);

}  // namespace kf::serve
