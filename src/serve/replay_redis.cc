// BDR's FIFO in Redis (serve/replay.h): shared by every server of one --prefix, kept as long as
// Redis keeps its data (see docs/OPERATIONS.md for persistence).
#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "common/clock.h"
#include "queue/redis.h"
#include "serve/replay.h"

namespace kf::serve {
namespace {
using nlohmann::json;
using queue::Redis;
using queue::Reply;

constexpr std::chrono::milliseconds kTimeout{5'000};

// KEYS: order list, entries hash. ARGV: key, value JSON, capacity, now_ms. Returns the number
// of entries dropped.
constexpr const char* kPushScript = R"lua(
local old = redis.call('HGET', KEYS[2], ARGV[1])
local failures, first = 1, ARGV[4]
if old then
  local f, c = string.match(old, '^(%d+) (%d+) ')
  failures = tonumber(f) + 1
  first = c
else
  redis.call('RPUSH', KEYS[1], ARGV[1])
end
redis.call('HSET', KEYS[2], ARGV[1], failures .. ' ' .. first .. ' ' .. ARGV[4] .. ' ' .. ARGV[2])
local cap = tonumber(ARGV[3])
local dropped = 0
while redis.call('LLEN', KEYS[1]) > cap do
  local k = redis.call('LPOP', KEYS[1])
  redis.call('HDEL', KEYS[2], k)
  dropped = dropped + 1
end
return dropped
)lua";

// KEYS: order list, entries hash. ARGV: n. Returns {key, record, key, record, ...}, oldest first.
constexpr const char* kTakeScript = R"lua(
local out = {}
for i = 1, tonumber(ARGV[1]) do
  local k = redis.call('LPOP', KEYS[1])
  if not k then break end
  local v = redis.call('HGET', KEYS[2], k)
  redis.call('HDEL', KEYS[2], k)
  if v then
    table.insert(out, k)
    table.insert(out, v)
  end
end
return out
)lua";

// "failures first_ms last_ms value_json" back into an entry.
Result<ReplayEntry> ParseRecord(const std::string& key, const std::string& rec) {
  ReplayEntry e;
  e.key = key;
  const char* p = rec.c_str();
  char* end = nullptr;
  e.failures = std::strtoll(p, &end, 10);
  e.first_failed_at_ms = std::strtoll(end, &end, 10);
  e.last_failed_at_ms = std::strtoll(end, &end, 10);
  if (end == nullptr || *end != ' ') {
    return Status::Internal("BDR entry '" + key + "' in Redis is malformed");
  }
  e.value = json::parse(end + 1, nullptr, /*allow_exceptions=*/false);
  if (e.value.is_discarded()) {
    return Status::Internal("BDR entry '" + key + "' in Redis is not valid JSON");
  }
  return e;
}

class RedisReplay : public ReplayStorage {
 public:
  RedisReplay(queue::RedisAddress addr, std::string prefix)
      : addr_(std::move(addr)), order_(prefix + ":bdr:order"), entries_(prefix + ":bdr:entries") {}

  Result<int64_t> Push(const std::string& key, const json& value, int64_t capacity) override {
    auto r = Run({"EVAL", kPushScript, "2", order_, entries_, key,
                  value.dump(-1, ' ', false, json::error_handler_t::replace),
                  std::to_string(std::max<int64_t>(capacity, 0)), std::to_string(NowMs())});
    if (!r.ok()) return r.status();
    if (r->type != Reply::Type::kInteger) return Unexpected(*r);
    return static_cast<int64_t>(r->integer);
  }

  Result<std::vector<ReplayEntry>> Take(int64_t n) override {
    auto r = Run({"EVAL", kTakeScript, "2", order_, entries_, std::to_string(n)});
    if (!r.ok()) return r.status();
    if (r->type != Reply::Type::kArray) return Unexpected(*r);
    std::vector<ReplayEntry> out;
    for (size_t i = 0; i + 1 < r->elements.size(); i += 2) {
      auto e = ParseRecord(r->elements[i].str, r->elements[i + 1].str);
      if (!e.ok()) return e.status();
      out.push_back(std::move(e.value()));
    }
    return out;
  }

  Result<int64_t> Size() override {
    auto r = Run({"LLEN", order_});
    if (!r.ok()) return r.status();
    if (r->type != Reply::Type::kInteger) return Unexpected(*r);
    return static_cast<int64_t>(r->integer);
  }

  const char* Name() const override { return "redis"; }

 private:
  static Status Unexpected(const Reply& r) {
    return Status::Unavailable("Redis answered the BDR command with " +
                               (r.type == Reply::Type::kError ? r.str : "an unexpected reply"));
  }

  // One command on the shared connection, connecting (again) when there is none or it broke.
  // A command that fails on a pooled connection is tried once more on a new one.
  Result<Reply> Run(const std::vector<std::string>& cmd) {
    std::lock_guard<std::mutex> lk(mu_);
    for (int attempt = 0; attempt < 2; ++attempt) {
      const bool fresh = conn_ == nullptr;
      if (fresh) {
        auto c = Redis::Connect(addr_, kTimeout);
        if (!c.ok()) {
          return Status::Unavailable("BDR: cannot reach Redis: " + c.status().message());
        }
        conn_ = std::move(c.value());
      }
      auto r = conn_->Command(cmd);
      if (r.ok()) return r;
      conn_.reset();
      if (fresh) return Status::Unavailable("BDR: Redis: " + r.status().message());
    }
    return Status::Unavailable("BDR: Redis could not be asked");
  }

  const queue::RedisAddress addr_;
  const std::string order_, entries_;
  std::mutex mu_;
  std::unique_ptr<Redis> conn_;  // guarded by mu_
};

}  // namespace

std::unique_ptr<ReplayStorage> MakeRedisReplay(const queue::RedisAddress& addr,
                                               const std::string& prefix) {
  return std::make_unique<RedisReplay>(addr, prefix);
}

}  // namespace kf::serve
