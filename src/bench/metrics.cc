#include "bench/metrics.h"

#include <algorithm>
#include <cmath>

namespace kf::bench {
namespace {

struct Key {
  std::string level, problem;
  bool operator<(const Key& o) const {
    return level != o.level ? level < o.level : problem < o.problem;
  }
};

std::optional<double> Geomean(const std::vector<double>& xs) {
  if (xs.empty()) return std::nullopt;
  double sum = 0;
  for (double x : xs) sum += std::log(x);
  return std::exp(sum / static_cast<double>(xs.size()));
}

// The speedup a threshold is compared with: the lower end of its interval under significance
// (where the verdict has one), else the point estimate; 0 when there is none.
double Shown(const std::optional<double>& point, const std::optional<double>& lo,
             const MetricOptions& opt) {
  if (!point) return 0;
  return opt.significance && lo ? *lo : *point;
}

// Rates over the counted samples of one group (all, or one level).
Aggregate Pool(const std::vector<const Sample*>& samples,
               const std::vector<const ProblemMetrics*>& problems, const MetricOptions& opt) {
  Aggregate a;
  std::vector<double> eager, compiled;
  int faster_eager = 0, faster_compile = 0;
  bool any_compile = false;
  std::vector<int> fast(opt.fast_p.size(), 0);
  for (const Sample* s : samples) {
    ++a.status_counts[StatusName(s->status)];
    if (s->status == VerdictStatus::kInfraError) {
      ++a.infra_errors;
      continue;
    }
    ++a.samples;
    any_compile = any_compile || s->speedup_vs_compile.has_value();
    if (s->status != VerdictStatus::kOk) continue;
    ++a.correct;
    if (s->speedup_vs_eager && *s->speedup_vs_eager > 0) eager.push_back(*s->speedup_vs_eager);
    if (s->speedup_vs_compile && *s->speedup_vs_compile > 0) {
      compiled.push_back(*s->speedup_vs_compile);
    }
    const double vs_eager = Shown(s->speedup_vs_eager, s->speedup_vs_eager_lo, opt);
    faster_eager += vs_eager > opt.faster_threshold ? 1 : 0;
    faster_compile +=
        Shown(s->speedup_vs_compile, s->speedup_vs_compile_lo, opt) > opt.faster_threshold ? 1 : 0;
    for (size_t i = 0; i < opt.fast_p.size(); ++i) {
      double p = opt.fast_p[i];
      fast[i] += (p <= 0 || vs_eager > p) ? 1 : 0;
    }
  }
  double n = a.samples > 0 ? static_cast<double>(a.samples) : 1.0;
  a.faster_rate_vs_eager = faster_eager / n;
  if (any_compile) a.faster_rate_vs_compile = faster_compile / n;
  for (size_t i = 0; i < opt.fast_p.size(); ++i) a.fast_p.emplace_back(opt.fast_p[i], fast[i] / n);
  a.geomean_speedup_vs_eager = Geomean(eager);
  a.geomean_speedup_vs_compile = Geomean(compiled);
  for (const ProblemMetrics* p : problems) {
    if (p->n == 0) continue;
    ++a.problems;
    a.pass_at_k += p->pass_at_k;
    a.pass_at_1 += p->pass_at_1;
    a.avg_at_k += p->avg_at_k;
  }
  if (a.problems > 0) {
    a.pass_at_k /= a.problems;
    a.pass_at_1 /= a.problems;
    a.avg_at_k /= a.problems;
  }
  return a;
}

}  // namespace

double PassAtK(int n, int c, int k) {
  if (n - c < k) return 1.0;  // every draw of k holds a passing sample
  double none_pass = 1.0;
  for (int i = n - c + 1; i <= n; ++i) none_pass *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - none_pass;
}

Metrics Compute(const std::vector<Sample>& samples, const MetricOptions& opt) {
  Metrics m;
  m.options = opt;
  std::map<Key, std::vector<const Sample*>> by_problem;
  for (const Sample& s : samples) by_problem[{s.level, s.problem}].push_back(&s);

  for (const auto& [key, group] : by_problem) {
    ProblemMetrics pm;
    pm.level = key.level;
    pm.problem = key.problem;
    std::vector<double> speedups;
    for (const Sample* s : group) {
      ++pm.status_counts[StatusName(s->status)];
      if (s->status == VerdictStatus::kInfraError) continue;
      ++pm.n;
      if (s->status != VerdictStatus::kOk) continue;
      ++pm.c;
      if (s->speedup_vs_eager && *s->speedup_vs_eager > 0) speedups.push_back(*s->speedup_vs_eager);
    }
    if (pm.n > 0) {
      pm.k_used = std::min(std::max(opt.k, 1), pm.n);
      pm.pass_at_k = PassAtK(pm.n, pm.c, pm.k_used);
      pm.pass_at_1 = PassAtK(pm.n, pm.c, 1);
      pm.avg_at_k = static_cast<double>(pm.c) / pm.n;
    }
    if (!speedups.empty())
      pm.best_speedup_vs_eager = *std::max_element(speedups.begin(), speedups.end());
    pm.geomean_speedup_vs_eager = Geomean(speedups);
    m.problems.push_back(std::move(pm));
  }

  std::vector<const Sample*> all;
  std::map<std::string, std::vector<const Sample*>> level_samples;
  for (const Sample& s : samples) {
    all.push_back(&s);
    level_samples[s.level].push_back(&s);
  }
  std::vector<const ProblemMetrics*> all_problems;
  std::map<std::string, std::vector<const ProblemMetrics*>> level_problems;
  for (const ProblemMetrics& p : m.problems) {
    all_problems.push_back(&p);
    level_problems[p.level].push_back(&p);
  }
  m.overall = Pool(all, all_problems, opt);
  for (const auto& [level, group] : level_samples) {
    m.per_level[level] = Pool(group, level_problems[level], opt);
  }
  // Each family as if it were the whole run: its own problems, its own Pass@k.
  std::map<std::string, std::vector<Sample>> by_family;
  for (const Sample& s : samples) {
    if (!s.family.empty()) by_family[s.family].push_back(s);
  }
  for (auto& [family, group] : by_family) {
    for (Sample& s : group) s.family.clear();  // one level of grouping
    m.per_family[family] = Compute(group, opt).overall;
  }
  return m;
}

}  // namespace kf::bench
