// front: cpp-httplib's server with its connections handed to the gate (gate.h). cpp-httplib
// accepts and parses; the gate owns every connection between requests; one handler thread runs
// one request through cpp-httplib's own request processing on a ConnStream.
//
// Thread-safety: CurrentRequest() is the calling handler thread's own.
#pragma once

#include <httplib.h>

#include <chrono>

#include "serve/conn_stream.h"
#include "serve/gate.h"

namespace kf::serve {

// The request being handled on this thread.
struct RequestContext {
  ConnStream* stream = nullptr;
  bool close = false;  // answered before its body was read: the connection cannot be reused
};
// nullptr outside a handler thread.
RequestContext* CurrentRequest();

class FrontServer : public httplib::Server {
 public:
  struct Options {
    GateOptions gate;
    std::chrono::milliseconds write_timeout{30'000};  // one send that makes no progress
    size_t max_requests_per_connection = 100;
  };
  // Raises the descriptor limit to its hard limit and keeps max_connections within it.
  explicit FrontServer(const Options& opt);
  ~FrontServer() override;

  GateStats Stats() const { return gate_.Stats(); }

 private:
  // cpp-httplib's accept loop calls this for every connection (through an inline task queue):
  // the gate takes it.
  bool process_and_close_socket(socket_t sock) override;
  After Serve(Conn& c);

  Options opt_;
  Gate gate_;
};

}  // namespace kf::serve
