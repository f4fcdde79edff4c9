// redis: a small synchronous Redis client. The bytes travel over redis_conn (TCP or TLS);
// hiredis formats the commands and parses the replies, and its types stay inside redis.cc.
// Replies come out as a plain value tree and every error as a kf::Status. Connecting logs in
// (AUTH [user] password), selects the database and PINGs, so a wrong password or a server that
// wants one fails at Connect with a clear message, never at some later command.
//
// Thread-safety: one Redis object is one connection; use it from one thread at a time. Each
// worker thread and the server's notification listener open their own.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "queue/redis_url.h"

namespace kf::queue {

struct Reply {
  enum class Type { kNil, kString, kInteger, kArray, kStatus, kError };
  Type type = Type::kNil;
  std::string str;  // kString, kStatus, kError
  long long integer = 0;
  std::vector<Reply> elements;  // kArray

  bool nil() const { return type == Type::kNil; }
};

class Redis {
 public:
  // Connects, logs in and selects the database. `timeout` bounds connecting (with the TLS
  // handshake and the login) and each Command or Pipeline; a blocking command (XREADGROUP
  // BLOCK, BLPOP) must block for less than it.
  static Result<std::unique_ptr<Redis>> Connect(const RedisAddress& addr,
                                                std::chrono::milliseconds timeout);
  ~Redis();
  Redis(const Redis&) = delete;
  Redis& operator=(const Redis&) = delete;

  // One command. A Redis error reply (-ERR ...) is returned as a Reply of type kError, not as a
  // failed Status: callers decide (BUSYGROUP is expected, for instance). A failed Status means
  // the connection is broken; Reconnect() before the next command.
  Result<Reply> Command(const std::vector<std::string>& args);
  // Several commands sent at once (one round trip), replies in order.
  Result<std::vector<Reply>> Pipeline(const std::vector<std::vector<std::string>>& cmds);
  Status Reconnect();
  // False once a command failed on the connection (it must be reconnected or dropped).
  bool healthy() const;

 private:
  struct Ctx;
  Redis(RedisAddress addr, std::chrono::milliseconds timeout);
  Status LogIn();
  RedisAddress addr_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Ctx> ctx_;  // null once broken
};

}  // namespace kf::queue
