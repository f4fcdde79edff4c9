// Eager and torch.compile times of a problem's reference kept in the store: measured with the
// candidate's protocol on one lane, once per problem and device kind (however many lanes ask),
// or recorded from a candidate's interleaved measurement; never from a disturbed one. Verdicts
// of timed candidates use their own interleaved measurement (execute/interleave.h).
#include "common/hash.h"
#include "eval/decide.h"
#include "eval/impl.h"

namespace kf::eval {
namespace {
using nlohmann::json;

// 2: the GPU delay before each timed call, the flush on the timed stream (verdict format 8);
// measurements disturbed by load are no longer stored.
constexpr const char* kProtocol = "kforge-timing-2";

json SummaryJson(const execute::TimingResult& t) {
  return {{"median", t.summary.median_ms},
          {"p10", t.summary.p10_ms},
          {"p90", t.summary.p90_ms},
          {"n", t.summary.n}};
}

json ResultJson(const execute::BaselineResult& r) {
  json j = {{"eager", nullptr}, {"compile", nullptr}, {"compile_unavailable", r.compile_unavailable}};
  if (r.eager) j["eager"] = SummaryJson(*r.eager);
  if (r.compiled) j["compile"] = SummaryJson(*r.compiled);
  return j;
}

}  // namespace

std::string Evaluator::Impl::BaselineKey(const LaneState& ls, const std::string& hash) const {
  const auto& t = opt.exec.timing;
  json keyj = {
      {"problem", hash},
      {"device", ls.device_key},
      {"protocol", kProtocol},
      {"timing",
       {t.warmup_iters, t.min_samples, t.max_samples, t.target_spread, t.budget_ms, t.pool}}};
  return Sha256Hex(keyj.dump());
}

Status Evaluator::Impl::UseReferenceTimes(LaneState& ls, const execute::ExecResult& r,
                                          const execute::ProblemInfo& problem, Verdict* v) {
  if (r.baselines) {
    UseBaselines(*r.baselines, v);
    RecordBaselines(ls, v->problem_hash, *r.baselines);
    v->stages.push_back({"baselines", true, 0, BaselineFacts(*r.baselines)});
    return Status::Ok();
  }
  const auto b0 = Now();
  auto b = GetBaselines(ls, v->problem_hash, problem);
  if (!b.ok()) return b.status();
  v->stages.push_back(
      {"baselines", true, MsSince(b0), {{"interleaved", false}, {"disturbed", b->disturbed}}});
  if (b->eager) v->eager_ms = b->eager->median_ms;
  if (b->compiled) v->compile_ms = b->compiled->median_ms;
  v->compile_unavailable = b->compile_unavailable;
  return Status::Ok();
}

void Evaluator::Impl::RecordBaselines(LaneState& ls, const std::string& hash,
                                      const execute::BaselineResult& b) {
  if (!StoreBaselines(b, /*interleaved=*/true)) return;
  (void)store->PutBaseline(BaselineKey(ls, hash), ResultJson(b));  // a record, best effort
}

Result<Baselines> Evaluator::Impl::GetBaselines(LaneState& ls, const std::string& hash,
                                                const execute::ProblemInfo& p) {
  const auto& t = opt.exec.timing;
  std::string key = BaselineKey(ls, hash);
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
  // A disturbed measurement (load on the machine, a noisy spread) is taken again, up to
  // twice; it is never stored, so it cannot set every later verdict's speedup.
  auto r = ls.lane->TimeBaselines(p, t, execute::DrawSeed());
  for (int again = 0; MeasureBaselinesAgain(r, again); ++again) {
    r = ls.lane->TimeBaselines(p, t, execute::DrawSeed());
  }
  if (!r.ok()) return r.status();
  Baselines b;
  if (r->eager) b.eager = r->eager->summary;
  if (r->compiled) b.compiled = r->compiled->summary;
  b.compile_unavailable = r->compile_unavailable;
  b.disturbed = r->disturbed;
  if (StoreBaselines(*r, /*interleaved=*/false)) {
    (void)store->PutBaseline(key, ResultJson(*r));  // a cache
  }
  return b;
}

}  // namespace kf::eval
