// redis_conn: the byte stream to one Redis server, plain TCP or TLS. Debian 12's hiredis (0.14)
// has no TLS, so kforge opens the socket itself (TLS through OpenSSL, which it links anyway)
// and uses hiredis only to format commands and parse replies (redis.cc). One code path serves
// both, so the plain-TCP tests exercise everything but the handshake.
//
// Every call takes a deadline and fails with kTimeout once it has passed; a connection that
// failed once is not used again (the caller opens a new one). Error messages name host:port,
// never the address's credentials. Thread-safety: one thread at a time per connection.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "queue/redis_url.h"

namespace kf::queue {

using RedisClock = std::chrono::steady_clock;

class RedisConn {
 public:
  virtual ~RedisConn() = default;
  // Sends every byte.
  virtual Status Write(std::string_view bytes, RedisClock::time_point deadline) = 0;
  // Receives at least one byte (at most `cap`): the count.
  virtual Result<size_t> Read(char* buf, size_t cap, RedisClock::time_point deadline) = 0;
};

// Connects to a.host:a.port (each address the name resolves to, in turn) and, for rediss://,
// completes the TLS handshake: the server's certificate must chain to a.tls.ca_file (or the
// system's CAs) and carry a.tls.server_name (default: the host; an IP address must be in the
// certificate's IP names) unless a.tls.verify is false. Name resolution itself is not bounded
// by the deadline (getaddrinfo cannot be); everything after it is.
Result<std::unique_ptr<RedisConn>> OpenRedisConn(const RedisAddress& a,
                                                 RedisClock::time_point deadline);

// "host:port" ("[v6]:port") for messages.
std::string RedisEndpoint(const RedisAddress& a);

}  // namespace kf::queue
