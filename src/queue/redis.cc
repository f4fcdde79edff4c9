#include "queue/redis.h"

#include <hiredis/hiredis.h>

#include "queue/redis_conn.h"

namespace kf::queue {
namespace {

Reply Convert(const redisReply* r) {
  Reply out;
  if (r == nullptr) return out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::kArray;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default:
      break;
  }
  return out;
}

struct ReaderFree {
  void operator()(redisReader* r) const { redisReaderFree(r); }
};

// Appends one command in RESP to `out`.
bool Format(const std::vector<std::string>& args, std::string* out) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  char* cmd = nullptr;
  int n = redisFormatCommandArgv(&cmd, static_cast<int>(argv.size()), argv.data(), lens.data());
  if (n < 0 || cmd == nullptr) return false;
  out->append(cmd, static_cast<size_t>(n));
  redisFreeCommand(cmd);
  return true;
}

// A server message with the secret taken out, in case a server ever echoes it.
std::string Scrub(std::string msg, const std::string& secret) {
  if (secret.empty()) return msg;
  for (size_t p; (p = msg.find(secret)) != std::string::npos;) msg.replace(p, secret.size(), "***");
  return msg;
}

}  // namespace

struct Redis::Ctx {
  std::unique_ptr<RedisConn> conn;
  std::unique_ptr<redisReader, ReaderFree> reader{redisReaderCreate()};
};

Redis::Redis(RedisAddress addr, std::chrono::milliseconds timeout)
    : addr_(std::move(addr)), timeout_(timeout) {}
Redis::~Redis() = default;

Result<std::unique_ptr<Redis>> Redis::Connect(const RedisAddress& addr,
                                              std::chrono::milliseconds timeout) {
  auto r = std::unique_ptr<Redis>(new Redis(addr, timeout));
  if (auto s = r->Reconnect(); !s.ok()) return s;
  return r;
}

Status Redis::Reconnect() {
  ctx_.reset();
  auto conn = OpenRedisConn(addr_, RedisClock::now() + timeout_);
  if (!conn.ok()) return conn.status();
  auto ctx = std::make_unique<Ctx>();
  if (!ctx->reader) return Status::Internal("hiredis: cannot create a reply reader");
  ctx->conn = std::move(conn.value());
  ctx_ = std::move(ctx);
  if (auto s = LogIn(); !s.ok()) {
    ctx_.reset();
    return s;
  }
  return Status::Ok();
}

Status Redis::LogIn() {
  const std::string who = "Redis at " + RedisEndpoint(addr_);
  std::vector<std::vector<std::string>> cmds;
  if (!addr_.password.empty()) {
    if (addr_.user.empty()) {
      cmds.push_back({"AUTH", addr_.password});
    } else {
      cmds.push_back({"AUTH", addr_.user, addr_.password});
    }
  }
  if (addr_.db != 0) cmds.push_back({"SELECT", std::to_string(addr_.db)});
  cmds.push_back({"PING"});
  auto reps = Pipeline(cmds);
  if (!reps.ok()) {
    // The first exchange failing is most often the wrong kind of port, or (TLS 1.3, where the
    // server judges the client's certificate after the handshake) a missing client certificate:
    // the server's alert may be lost to its reset.
    const std::string& msg = reps.status().message();
    if (reps.status().code() == Code::kTimeout || msg.find("?cert=") != std::string::npos) {
      return reps.status();
    }
    if (!addr_.tls.enabled) {
      return Status::Unavailable(msg + " (if that port speaks TLS, use rediss://)");
    }
    if (addr_.tls.cert_file.empty()) {
      return Status::Unavailable(
          msg + " (if the server wants a client certificate: ?cert=FILE&key=FILE)");
    }
    return reps.status();
  }
  for (size_t i = 0; i < cmds.size(); ++i) {
    const Reply& r = (*reps)[i];
    if (r.type != Reply::Type::kError) continue;
    const std::string msg = Scrub(r.str, addr_.password);
    if (cmds[i][0] == "AUTH") {
      return Status::Unavailable(who + " refused the login" +
                                 (addr_.user.empty() ? "" : " of user '" + addr_.user + "'") +
                                 ": " + msg);
    }
    if (msg.rfind("NOAUTH", 0) == 0) {
      return Status::Unavailable(who + " wants a password: " + msg +
                                 " (give it in the URL, redis://[user]:PASSWORD@host, or with "
                                 "--redis-password-env VAR)");
    }
    return Status::Unavailable(who + ": " + cmds[i][0] + ": " + msg);
  }
  return Status::Ok();
}

bool Redis::healthy() const { return ctx_ != nullptr; }

Result<Reply> Redis::Command(const std::vector<std::string>& args) {
  auto rs = Pipeline({args});
  if (!rs.ok()) return rs.status();
  return std::move(rs->front());
}

Result<std::vector<Reply>> Redis::Pipeline(const std::vector<std::vector<std::string>>& cmds) {
  const std::string who = "Redis at " + RedisEndpoint(addr_);
  // Messages start with the command ("XREADGROUP: Redis at h:p closed the connection").
  const std::string what = cmds.empty() || cmds[0].empty() ? "Redis" : cmds[0][0];
  if (!ctx_) return Status::Unavailable(what + ": " + who + ": not connected");
  const auto deadline = RedisClock::now() + timeout_;
  std::string out;
  for (const auto& args : cmds) {
    if (!Format(args, &out)) return Status::Internal(what + ": cannot format the command");
  }
  // Any failure from here on leaves the stream out of step: the connection is dropped.
  auto broken = [&](Status s) {
    ctx_.reset();
    return s;
  };
  if (auto s = ctx_->conn->Write(out, deadline); !s.ok()) {
    return broken(s.code() == Code::kTimeout ? Status::Timeout(what + ": " + s.message())
                                             : Status::Unavailable(what + ": " + s.message()));
  }
  std::vector<Reply> replies;
  char buf[16 * 1024];
  while (replies.size() < cmds.size()) {
    void* raw = nullptr;
    if (redisReaderGetReply(ctx_->reader.get(), &raw) != REDIS_OK) {
      return broken(
          Status::Unavailable(what + ": " + who + ": bad reply: " + ctx_->reader->errstr));
    }
    if (raw != nullptr) {
      replies.push_back(Convert(static_cast<redisReply*>(raw)));
      freeReplyObject(raw);
      continue;
    }
    auto n = ctx_->conn->Read(buf, sizeof(buf), deadline);
    if (!n.ok()) {
      const Status& s = n.status();
      return broken(s.code() == Code::kTimeout ? Status::Timeout(what + ": " + s.message())
                                               : Status::Unavailable(what + ": " + s.message()));
    }
    redisReaderFeed(ctx_->reader.get(), buf, *n);
  }
  return replies;
}

}  // namespace kf::queue
