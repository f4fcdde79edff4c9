// rl: one prompt per problem with its difficulty from Pass@k (bench's metrics), easiest first.
#include <algorithm>
#include <map>
#include <set>

#include "bench/metrics.h"
#include "data/internal.h"

namespace kf::data {
namespace {
using nlohmann::json;

struct Problem {
  std::string id, hash;
  std::filesystem::path path;
  std::optional<bench::ProblemMetrics> metrics;  // none: no counted sample
};

std::string Bucket(double difficulty, int c) {
  if (c == 0) return "unsolved";
  if (difficulty < 1.0 / 3) return "easy";
  if (difficulty < 2.0 / 3) return "medium";
  return "hard";
}

// bench::Sample wants a level and a problem name; the id is split at its last '/'.
bench::Sample ToBench(const Sample& s) {
  std::string level = LevelOf(s.problem);
  std::string name = level.empty() ? s.problem : s.problem.substr(level.size() + 1);
  return {level, name, s.verdict.status, s.verdict.speedup_vs_eager, s.verdict.speedup_vs_compile};
}

}  // namespace

Output Rl(const Corpus& c, const RlOptions& opt, const PromptFn& prompt,
          const std::function<Result<std::string>(const std::filesystem::path&)>& read_file) {
  Output out;
  std::map<std::string, Problem> problems;
  std::vector<bench::Sample> samples;
  auto note = [&](const Sample& s) {
    auto& p = problems[s.problem];
    p.id = s.problem;
    if (p.hash.empty()) p.hash = s.problem_hash;
    if (p.path.empty()) p.path = s.problem_path;
    samples.push_back(ToBench(s));
  };
  for (const auto& s : c.bench) note(s);
  for (const auto& conv : c.conversations) {
    for (const auto& t : conv.turns) {
      if (t.turn == 1) note(t);  // the single-shot answer; repairs are not independent samples
    }
  }
  for (const auto& [id, path] : opt.extra_problems) {
    auto& p = problems[id];
    p.id = id;
    if (p.path.empty()) p.path = path;
  }
  bench::MetricOptions mo;
  mo.k = std::max(1, opt.k);
  bench::Metrics m = bench::Compute(samples, mo);
  for (const auto& pm : m.problems) {
    std::string id = pm.level.empty() ? pm.problem : pm.level + "/" + pm.problem;
    auto it = problems.find(id);
    if (it != problems.end() && pm.n > 0) it->second.metrics = pm;
  }

  std::vector<const Problem*> order;
  for (const auto& [id, p] : problems) {
    if (p.metrics) {
      double d = 1 - p.metrics->pass_at_k;
      if (d < opt.min_difficulty || d > opt.max_difficulty) continue;
    }
    order.push_back(&p);
  }
  std::stable_sort(order.begin(), order.end(), [](const Problem* a, const Problem* b) {
    if (a->metrics.has_value() != b->metrics.has_value()) return a->metrics.has_value();
    if (!a->metrics) return false;
    return a->metrics->pass_at_k > b->metrics->pass_at_k;  // easiest first; ids break ties
  });

  for (const Problem* p : order) {
    auto msgs = PromptFor(c, p->id, p->hash, p->path, prompt);
    if (!msgs.ok()) {
      out.warnings.push_back(p->id + ": " + msgs.status().message());
      continue;
    }
    std::string truth = p->id;
    if (opt.inline_problems) {
      auto text = p->path.empty() ? Result<std::string>(Status::NotFound("no problem file"))
                                  : read_file(p->path);
      if (!text.ok()) {
        out.warnings.push_back(p->id + ": --inline-problems: " + text.status().message());
        continue;
      }
      truth = *text;
    }
    json meta = {{"problem", p->id},
                 {"problem_hash", p->hash},
                 {"level", LevelOf(p->id)},
                 {"k", mo.k},
                 {"data_source", opt.data_source},
                 {"ability", "kernel_generation"},
                 {"ground_truth", truth},
                 {"index", out.examples.size()}};
    if (p->metrics) {
      const auto& pm = *p->metrics;
      double d = 1 - pm.pass_at_k;
      meta.update({{"n", pm.n},
                   {"c", pm.c},
                   {"pass_at_1", pm.pass_at_1},
                   {"pass_at_k", pm.pass_at_k},
                   {"difficulty", d},
                   {"bucket", Bucket(d, pm.c)}});
    } else {
      meta.update({{"n", 0},
                   {"c", 0},
                   {"pass_at_1", nullptr},
                   {"pass_at_k", nullptr},
                   {"difficulty", nullptr},
                   {"bucket", "unknown"}});
    }
    out.examples.push_back(Example{*msgs, meta});
  }
  return out;
}

}  // namespace kf::data
