// conn_stream: cpp-httplib's Stream over one connection the gate admitted, with the request's
// deadline on every read (cpp-httplib's own stream only bounds each recv, so a client sending
// a byte every few seconds would hold a thread for ever) and a timeout on every write.
//
// Thread-safety: one thread at a time (the handler thread of the connection).
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>

#include "serve/gate.h"

namespace kf::serve {

class ConnStream : public httplib::Stream {
 public:
  // Reads `buffered` first, then the socket (non-blocking), until `deadline`.
  ConnStream(int fd, std::string buffered, GateClock::time_point deadline,
             std::chrono::milliseconds write_timeout);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

  bool timed_out() const { return timed_out_; }  // a read missed the request's deadline
  bool failed() const { return failed_; }        // a read or write failed: do not reuse
  std::string TakeLeftover();                    // bytes read but not consumed

 private:
  bool WaitFor(short events, GateClock::time_point until) const;

  int fd_;
  std::string buf_;
  size_t off_ = 0;
  GateClock::time_point deadline_;
  std::chrono::milliseconds write_timeout_;
  bool timed_out_ = false;
  bool failed_ = false;
};

}  // namespace kf::serve
