#include "queue/redis.h"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <cstdlib>

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

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

timeval ToTimeval(std::chrono::milliseconds ms) {
  timeval tv;
  tv.tv_sec = static_cast<long>(ms.count() / 1000);
  tv.tv_usec = static_cast<long>((ms.count() % 1000) * 1000);
  return tv;
}

}  // namespace

struct Redis::Ctx {
  redisContext* c = nullptr;
  ~Ctx() {
    if (c) redisFree(c);
  }
  Status Error(const std::string& what) const {
    std::string msg = what + ": " + (c && c->errstr[0] ? c->errstr : "connection lost");
    if (c && (c->err == REDIS_ERR_IO) && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return Status::Timeout(msg);
    }
    return Status::Unavailable(msg);
  }
};

Result<RedisAddress> ParseRedisUrl(const std::string& url) {
  RedisAddress a;
  std::string rest = url;
  const std::string scheme = "redis://";
  if (rest.rfind(scheme, 0) == 0) rest = rest.substr(scheme.size());
  if (rest.empty()) return Status::Invalid("empty Redis address");
  auto slash = rest.find('/');
  if (slash != std::string::npos) {
    std::string db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db.empty()) {
      char* end = nullptr;
      long v = std::strtol(db.c_str(), &end, 10);
      if (*end != '\0' || v < 0) return Status::Invalid("bad Redis database number in " + url);
      a.db = static_cast<int>(v);
    }
  }
  auto colon = rest.rfind(':');
  if (colon != std::string::npos) {
    std::string port = rest.substr(colon + 1);
    char* end = nullptr;
    long v = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || v <= 0 || v > 65535) {
      return Status::Invalid("bad Redis port in " + url);
    }
    a.port = static_cast<int>(v);
    rest = rest.substr(0, colon);
  }
  if (!rest.empty()) a.host = rest;
  return a;
}

Redis::Redis(RedisAddress addr, std::chrono::milliseconds timeout, std::unique_ptr<Ctx> ctx)
    : addr_(std::move(addr)), timeout_(timeout), ctx_(std::move(ctx)) {}
Redis::~Redis() = default;

Result<std::unique_ptr<Redis>> Redis::Connect(const std::string& url,
                                              std::chrono::milliseconds timeout) {
  auto a = ParseRedisUrl(url);
  if (!a.ok()) return a.status();
  return Connect(*a, timeout);
}

Result<std::unique_ptr<Redis>> Redis::Connect(const RedisAddress& addr,
                                              std::chrono::milliseconds timeout) {
  auto r = std::unique_ptr<Redis>(new Redis(addr, timeout, std::make_unique<Ctx>()));
  if (auto s = r->Reconnect(); !s.ok()) return s;
  return r;
}

Status Redis::Reconnect() {
  ctx_ = std::make_unique<Ctx>();
  ctx_->c = redisConnectWithTimeout(addr_.host.c_str(), addr_.port, ToTimeval(timeout_));
  std::string where = addr_.host + ":" + std::to_string(addr_.port);
  if (ctx_->c == nullptr || ctx_->c->err) return ctx_->Error("cannot connect to Redis at " + where);
  redisSetTimeout(ctx_->c, ToTimeval(timeout_));
  if (addr_.db != 0) {
    auto r = Command({"SELECT", std::to_string(addr_.db)});
    if (!r.ok()) return r.status();
    if (r->type == Reply::Type::kError) return Status::Invalid("Redis SELECT: " + r->str);
  }
  return Status::Ok();
}

bool Redis::healthy() const { return ctx_ && ctx_->c && ctx_->c->err == 0; }

Result<Reply> Redis::Command(const std::vector<std::string>& args) {
  auto rs = Pipeline({args});
  if (!rs.ok()) return rs.status();
  return std::move(rs->front());
}

Result<std::vector<Reply>> Redis::Pipeline(const std::vector<std::vector<std::string>>& cmds) {
  if (!ctx_->c || ctx_->c->err) return ctx_->Error("Redis");
  for (const auto& args : cmds) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_->c, static_cast<int>(argv.size()), argv.data(), lens.data()) !=
        REDIS_OK) {
      return ctx_->Error("Redis " + (args.empty() ? std::string() : args[0]));
    }
  }
  std::vector<Reply> out;
  for (const auto& args : cmds) {
    void* raw = nullptr;
    if (redisGetReply(ctx_->c, &raw) != REDIS_OK) {
      return ctx_->Error("Redis " + (args.empty() ? std::string() : args[0]));
    }
    ReplyPtr r(static_cast<redisReply*>(raw));
    out.push_back(Convert(r.get()));
  }
  return out;
}

}  // namespace kf::queue
