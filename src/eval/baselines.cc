// Eager and torch.compile times of a problem's reference: timed with the candidate's protocol
// on one lane, once per problem and device kind (however many lanes ask), and kept in the store.
#include "common/hash.h"
#include "eval/impl.h"

namespace kf::eval {
namespace {
using nlohmann::json;

constexpr const char* kProtocol = "kforge-timing-1";

json SummaryJson(const execute::TimingResult& t) {
  return {{"median", t.summary.median_ms},
          {"p10", t.summary.p10_ms},
          {"p90", t.summary.p90_ms},
          {"n", t.summary.n}};
}

}  // namespace

Result<Baselines> Evaluator::Impl::GetBaselines(LaneState& ls, const std::string& hash,
                                                const execute::ProblemInfo& p) {
  const auto& t = opt.exec.timing;
  json keyj = {
      {"problem", hash},
      {"device", ls.device_key},
      {"protocol", kProtocol},
      {"timing",
       {t.warmup_iters, t.min_samples, t.max_samples, t.target_spread, t.budget_ms, t.pool}}};
  std::string key = Sha256Hex(keyj.dump());
  std::shared_ptr<std::mutex> key_mu;
  {
    std::lock_guard<std::mutex> g(baselines_mu);
    auto& m = baseline_locks[key];
    if (!m) m = std::make_shared<std::mutex>();
    key_mu = m;
  }
  std::lock_guard<std::mutex> key_guard(*key_mu);
  auto to_summary = [](const json& j) -> std::optional<execute::Summary> {
    if (!j.is_object()) return std::nullopt;
    execute::Summary s;
    s.median_ms = j.value("median", 0.0);
    s.p10_ms = j.value("p10", 0.0);
    s.p90_ms = j.value("p90", 0.0);
    s.n = j.value("n", 0);
    return s;
  };
  if (auto cached = store->GetBaseline(key); cached.ok() && cached->has_value()) {
    const json& j = **cached;
    Baselines b;
    b.eager = to_summary(j["eager"]);
    b.compiled = to_summary(j["compile"]);
    b.compile_unavailable = j.value("compile_unavailable", "");
    return b;
  }
  auto r = ls.lane->TimeBaselines(p, t, execute::DrawSeed());
  if (!r.ok()) return r.status();
  Baselines b;
  json j = {
      {"eager", nullptr}, {"compile", nullptr}, {"compile_unavailable", r->compile_unavailable}};
  if (r->eager) {
    b.eager = r->eager->summary;
    j["eager"] = SummaryJson(*r->eager);
  }
  if (r->compiled) {
    b.compiled = r->compiled->summary;
    j["compile"] = SummaryJson(*r->compiled);
  }
  b.compile_unavailable = r->compile_unavailable;
  (void)store->PutBaseline(key, j);  // a cache: failing to write it only costs time later
  return b;
}

}  // namespace kf::eval
