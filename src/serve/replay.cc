#include "serve/replay.h"

#include "common/hash.h"

namespace kf::serve {
namespace {
using nlohmann::json;

class SqliteReplay : public ReplayStorage {
 public:
  explicit SqliteReplay(std::shared_ptr<store::Store> store) : store_(std::move(store)) {}

  Result<int64_t> Push(const std::string& key, const json& value, int64_t capacity) override {
    return store_->PushReplay(key, value, capacity);
  }

  Result<std::vector<ReplayEntry>> Take(int64_t n) override {
    auto rows = store_->TakeReplay(n);
    if (!rows.ok()) return rows.status();
    std::vector<ReplayEntry> out;
    for (auto& r : *rows) {
      out.push_back(
          {std::move(r.key), std::move(r.value), r.failures, r.created_at_ms, r.updated_at_ms});
    }
    return out;
  }

  Result<int64_t> Size() override { return store_->CountReplay(); }
  const char* Name() const override { return "sqlite"; }

 private:
  std::shared_ptr<store::Store> store_;
};

}  // namespace

std::unique_ptr<ReplayStorage> MakeSqliteReplay(std::shared_ptr<store::Store> store) {
  return std::make_unique<SqliteReplay>(std::move(store));
}

std::string ReplayKey(const GroupRequest& g) {
  // Length-prefixed parts, so no choice of texts makes two groups one key.
  std::string id = g.problem.empty() ? "source:" + Sha256Hex(g.problem_source) : "id:" + g.problem;
  return Sha256Hex(std::to_string(id.size()) + ":" + id + std::to_string(g.prompt.size()) + ":" +
                   g.prompt);
}

json ReplayValue(const GroupRequest& g, const GroupStats& s) {
  json v = json::object();
  if (!g.problem.empty())
    v["problem"] = g.problem;
  else
    v["problem_source"] = g.problem_source;
  v["prompt"] = g.prompt.empty() ? json(nullptr) : json(g.prompt);
  v["metadata"] = g.metadata.is_null() ? json(nullptr) : g.metadata;
  v["group_id"] = g.group_id.empty() ? json(nullptr) : json(g.group_id);
  v["samples"] = s.n;
  v["best_reward"] = s.max ? json(*s.max) : json(nullptr);
  return v;
}

int64_t ReplaySlots(int64_t n, double p, std::mt19937_64& rng) {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  std::binomial_distribution<int64_t> d(n, p);
  return d(rng);
}

Bdr::Bdr(BdrOptions opt, std::unique_ptr<ReplayStorage> storage)
    : opt_(opt),
      storage_(std::move(storage)),
      rng_(opt.seed != 0 ? opt.seed
                         : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()) {}

Result<bool> Bdr::Record(const GroupRequest& g, const GroupStats& s) {
  if (!s.all_failed || opt_.capacity <= 0) return false;
  auto dropped = storage_->Push(ReplayKey(g), ReplayValue(g, s), opt_.capacity);
  std::lock_guard<std::mutex> lk(mu_);
  if (!dropped.ok()) {
    ++counts_.errors;
    return dropped.status();
  }
  ++counts_.recorded;
  counts_.evicted += *dropped;
  return true;
}

Result<Bdr::Sample> Bdr::Draw(int64_t n, std::optional<double> p) {
  if (n < 1) return Status::Invalid("n must be at least 1");
  if (p && !(*p >= 0 && *p <= 1)) return Status::Invalid("p must be a probability in [0, 1]");
  Sample out;
  out.p = p ? *p : opt_.replay_prob;
  int64_t slots;
  {
    std::lock_guard<std::mutex> lk(mu_);
    slots = ReplaySlots(n, out.p, rng_);
  }
  if (slots > 0) {
    auto taken = storage_->Take(slots);
    if (!taken.ok()) return taken.status();
    out.replay = std::move(taken.value());
  }
  out.fresh = n - static_cast<int64_t>(out.replay.size());
  std::lock_guard<std::mutex> lk(mu_);
  counts_.replayed += static_cast<int64_t>(out.replay.size());
  return out;
}

BdrCounts Bdr::counts() const {
  std::lock_guard<std::mutex> lk(mu_);
  return counts_;
}

json ReplayEntryJson(const ReplayEntry& e) {
  json j = e.value.is_object() ? e.value : json::object();
  j["failures"] = e.failures;
  j["first_failed_at_ms"] = e.first_failed_at_ms;
  j["last_failed_at_ms"] = e.last_failed_at_ms;
  return j;
}

}  // namespace kf::serve
