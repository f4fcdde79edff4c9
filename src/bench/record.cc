#include "bench/record.h"

namespace kf::bench {

store::RunRow RunRowOf(const Metrics& m, const RunInfo& info) {
  store::RunRow r;
  r.model = info.model;
  r.started_at = info.started_at;
  r.backend = info.backend;
  r.device = info.device;
  r.policy = info.policy;
  r.k = m.options.k;
  r.results = ResultsJson(m, info);
  r.overall = r.results["overall"];
  return r;
}

store::RunSampleRow SampleRowOf(const SampleRecord& rec, const std::string& verdict_key) {
  const Verdict& v = rec.verdict;
  store::RunSampleRow r;
  r.level = rec.level;
  r.problem = rec.problem;
  r.problem_id = rec.level.empty() ? rec.problem : rec.level + "/" + rec.problem;
  r.index = rec.index;
  r.sample_path = rec.sample_path.string();
  r.verdict_key = verdict_key;
  r.problem_hash = v.problem_hash;
  r.candidate_hash = v.candidate_hash;
  r.status = StatusName(v.status);
  r.reward = v.reward;
  r.speedup_vs_eager = v.speedup_vs_eager;
  r.speedup_vs_compile = v.speedup_vs_compile;
  if (v.speedup_vs_eager_ci) r.speedup_vs_eager_lo = v.speedup_vs_eager_ci->lo;
  if (v.speedup_vs_compile_ci) r.speedup_vs_compile_lo = v.speedup_vs_compile_ci->lo;
  if (v.candidate_ms) r.candidate_ms = v.candidate_ms->median_ms;
  r.from_store = rec.from_store;
  return r;
}

std::string DefaultModelName(const std::filesystem::path& samples_root) {
  auto name_of = [](std::filesystem::path p) {
    p = p.lexically_normal();
    if (p.filename().empty()) p = p.parent_path();  // "runs/gpt-x/"
    return p.filename().string();
  };
  std::string name = name_of(samples_root);
  if (name.empty() || name == "." || name == "..") {
    name = name_of(std::filesystem::absolute(samples_root));
  }
  return name.empty() || name == "." || name == ".." ? "samples" : name;
}

}  // namespace kf::bench
