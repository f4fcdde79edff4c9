// What a verdict says of its timing: the timing and baselines stages' facts, the reference's
// interleaved times, the speedups and their intervals.
#include "execute/timing.h"
#include "eval/impl.h"

namespace kf::eval {
using nlohmann::json;

namespace {
json ModeJson(const execute::TimingResult& t) {
  const auto& s = t.summary;
  return {{"median", s.median_ms}, {"p10", s.p10_ms}, {"p90", s.p90_ms}, {"n", s.n},
          {"spread", s.median_ms > 0 ? (s.p75_ms - s.p25_ms) / s.median_ms : 0.0},
          {"delay_us", t.delay_us}, {"host_ms", t.host_ms},
          {"hidden_fraction", t.hidden_fraction()}};
}
}  // namespace

json TimingFacts(const execute::ExecResult& r) {
  const execute::TimingResult& t = *r.timing;
  const auto& s = t.summary;
  return {{"stop_reason", t.stop_reason},
          {"input_sets", r.input_sets},
          {"host_cpu_ms", r.host_cpu_ms},
          {"host_wait_ms", r.host_wait_ms},
          {"wall_gap_ms", r.wall_gap_ms},
          {"noop_ms", r.noop_ms},
          {"noop_cpu_ms", r.noop_cpu_ms},
          {"spread", s.median_ms > 0 ? (s.p75_ms - s.p25_ms) / s.median_ms : 0.0},
          {"delay_us", t.delay_us},
          {"host_ms", t.host_ms},
          {"hidden_fraction", t.hidden_fraction()},
          {"gpu", r.gpu},
          {"lane_cpus", r.lane_cpus},
          {"quantiles_ms", execute::Quantiles(t.samples_ms, 20)}};
}

json BaselineFacts(const execute::BaselineResult& b) {
  json j = {{"interleaved", true}, {"disturbed", b.disturbed}, {"judge_wait_ms", b.judge_wait_ms}};
  if (b.eager) j["eager"] = ModeJson(*b.eager);
  if (b.compiled) j["compile"] = ModeJson(*b.compiled);
  return j;
}

void UseBaselines(const execute::BaselineResult& b, Verdict* v) {
  v->eager_ms.reset();
  v->compile_ms.reset();
  if (b.eager) v->eager_ms = b.eager->summary.median_ms;
  if (b.compiled) v->compile_ms = b.compiled->summary.median_ms;
  v->compile_unavailable = b.compile_unavailable;
}

std::optional<SpeedupInterval> Ci(const std::vector<double>& base_ms,
                                         const std::vector<double>& cand_ms) {
  auto i = execute::RatioInterval(base_ms, cand_ms);
  if (!i) return std::nullopt;
  return SpeedupInterval{i->lo, i->hi};
}

void SetSpeedups(const execute::ExecResult& counted, Verdict* v) {
  if (!v->candidate_ms || !(v->candidate_ms->median_ms > 0)) return;
  const double median_ms = v->candidate_ms->median_ms;
  if (v->eager_ms) v->speedup_vs_eager = *v->eager_ms / median_ms;
  if (v->compile_ms) v->speedup_vs_compile = *v->compile_ms / median_ms;
  if (counted.timing && counted.baselines) {
    const auto& samples = counted.timing->samples_ms;
    const auto& b = *counted.baselines;
    if (b.eager) v->speedup_vs_eager_ci = Ci(b.eager->samples_ms, samples);
    if (b.compiled) v->speedup_vs_compile_ci = Ci(b.compiled->samples_ms, samples);
  }
}

}  // namespace kf::eval
