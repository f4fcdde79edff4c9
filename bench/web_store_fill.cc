// web_store_fill: fills a store with synthetic bench runs for bench/web_pages.py, which times
// the web UI's pages over it. Every verdict has what real ones carry (stages with their facts,
// per-trial records, timing quantiles, diagnostics with lines, feedback) and its candidate's
// text (about 3 KB), so pages do the work they do on a real store.
//
// Usage: kforge_web_fill DB RUNS PROBLEMS SAMPLES_PER_PROBLEM
// Writes RUNS runs of PROBLEMS problems (over three levels) with SAMPLES_PER_PROBLEM samples
// each: RUNS x PROBLEMS x SAMPLES verdicts. Prints one line per run and the keys of a cheat's
// and an ok verdict (the benchmark opens their pages).
#include <cstdio>
#include <iostream>
#include <map>
#include <random>
#include <string>

#include "common/hash.h"
#include "store/store.h"

namespace {

using kf::Verdict;
using kf::VerdictStatus;

std::string Candidate(int problem, int run, int sample) {
  std::string s = "# synthetic candidate: problem " + std::to_string(problem) + ", run " +
                  std::to_string(run) + ", sample " + std::to_string(sample) +
                  "\nimport torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import "
                  "load_inline\n\nsource = r\"\"\"\n#include <torch/extension.h>\n\n";
  for (int i = 0; i < 60; ++i) {
    s += "// step " + std::to_string(i) + ": out[i] = in[i] * " + std::to_string((run + i) % 7) +
         " + " + std::to_string(sample) + "; </script> & <b>\n";
  }
  s += "\"\"\"\n\next = load_inline(name=\"k\", cpp_sources=source, functions=[\"f\"])\n\n"
       "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.f(x)\n";
  return s;
}

Verdict MakeVerdict(const std::string& problem_id, const std::string& problem_hash,
                    const std::string& text, std::mt19937& rng) {
  Verdict v;
  v.problem_id = problem_id;
  v.problem_hash = problem_hash;
  v.candidate_hash = kf::Sha256Hex(text);
  v.backend = "cuda";
  v.device = "NVIDIA H200";
  const int roll = static_cast<int>(rng() % 100);
  v.status = roll < 55   ? VerdictStatus::kOk
             : roll < 70 ? VerdictStatus::kIncorrect
             : roll < 82 ? VerdictStatus::kCompileError
             : roll < 90 ? VerdictStatus::kCheat
             : roll < 96 ? VerdictStatus::kRuntimeError
                         : VerdictStatus::kFormatError;
  v.stages = {{"extract", true, 0.6, {{"from_reply", false}}},
              {"build", v.status != VerdictStatus::kCompileError, 900, {{"cache_hit", false}}}};
  nlohmann::json trials = nlohmann::json::array();
  for (int t = 0; t < 7; ++t) {
    trials.push_back({{"label", "seed " + std::to_string(t + 1)},
                      {"pass", v.status == VerdictStatus::kOk},
                      {"max_abs_err", 1e-6 * (t + 1)},
                      {"max_rel_err", 1e-7 * (t + 1)},
                      {"bad_elements", 0},
                      {"elements", 1 << 20}});
  }
  v.stages.push_back({"correctness", v.status == VerdictStatus::kOk, 30, {{"trials", trials}}});
  if (v.status == VerdictStatus::kOk) {
    const double ms = 0.01 + (rng() % 1000) / 1000.0;
    v.trials_passed = v.trials_total = 7;
    v.candidate_ms = kf::TimingSummary{ms, ms * 0.95, ms * 1.1, 300};
    v.eager_ms = ms * (0.3 + (rng() % 300) / 100.0);
    v.speedup_vs_eager = *v.eager_ms / ms;
    v.reward = 1 + 0.5 * std::min(std::max(*v.speedup_vs_eager - 1, 0.0), 4.0);
    nlohmann::json q = nlohmann::json::array();
    for (int i = 0; i <= 20; ++i) q.push_back(ms * (0.9 + 0.01 * i));
    v.stages.push_back({"timing", true, 110, {{"stop_reason", "stable"}, {"quantiles_ms", q}}});
    v.feedback = "Correct: passed 7 of 7 correctness trials.\nYour kernel takes " +
                 std::to_string(ms) + " ms.";
  } else {
    v.reward = -1;
    kf::Diagnostic d;
    d.stage = v.status == VerdictStatus::kCheat ? "static" : "correctness";
    d.code = v.status == VerdictStatus::kCheat ? "H08" : "mismatch";
    d.message = "synthetic finding at line 12";
    d.line = 12;
    d.excerpt = "// step 3: out[i] = in[i] * 2 + 0; </script> & <b>";
    d.hint = "do the work in your kernel";
    v.diagnostics = {d};
    v.feedback = "Your code breaks a rule: " + d.message;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: kforge_web_fill DB RUNS PROBLEMS SAMPLES_PER_PROBLEM\n";
    return 2;
  }
  const int runs = std::atoi(argv[2]), problems = std::atoi(argv[3]), per = std::atoi(argv[4]);
  auto st = kf::store::Store::Open(argv[1]);
  if (!st.ok()) {
    std::cerr << st.status().message() << "\n";
    return 3;
  }
  kf::store::Store& store = **st;
  std::mt19937 rng(12345);
  std::string cheat_key, ok_key;
  std::map<std::string, std::string> problem_texts;
  for (int r = 0; r < runs; ++r) {
    kf::store::RunRow run;
    run.model = "model-" + std::to_string(r % 5);
    char when[32];
    std::snprintf(when, sizeof when, "2026-11-%02dT10:00:00Z", 1 + r % 28);
    run.started_at = when;
    run.backend = "cuda";
    run.device = "NVIDIA H200";
    run.k = 1;
    std::vector<kf::store::RunSampleRow> rows;
    std::map<std::string, std::string> texts;
    int ok = 0;
    for (int p = 0; p < problems; ++p) {
      char stem[32];
      std::snprintf(stem, sizeof stem, "%d_problem_%03d", p + 1, p);
      const std::string level = "level" + std::to_string(1 + p % 3);
      const std::string problem_id = level + "/" + stem;
      const std::string ptext = "class Model:  # problem " + problem_id + "\n";
      const std::string phash = kf::Sha256Hex(ptext);
      texts.emplace(phash, ptext);
      for (int s = 0; s < per; ++s) {
        const std::string text = Candidate(p, r, s);
        Verdict v = MakeVerdict(problem_id, phash, text, rng);
        const std::string key = kf::Sha256Hex("key|" + v.candidate_hash);
        if (auto w = store.PutVerdict(key, v); !w.ok()) {
          std::cerr << w.message() << "\n";
          return 3;
        }
        if (v.status == VerdictStatus::kCheat && cheat_key.empty()) cheat_key = key;
        if (v.status == VerdictStatus::kOk && ok_key.empty()) ok_key = key;
        ok += v.status == VerdictStatus::kOk;
        texts.emplace(v.candidate_hash, text);
        kf::store::RunSampleRow row;
        row.problem_id = problem_id;
        row.level = level;
        row.problem = stem;
        row.index = s;
        row.sample_path = "samples/" + problem_id + "/sample_" + std::to_string(s) + ".py";
        row.verdict_key = key;
        row.problem_hash = phash;
        row.candidate_hash = v.candidate_hash;
        row.status = kf::StatusName(v.status);
        row.reward = v.reward;
        row.speedup_vs_eager = v.speedup_vs_eager;
        if (v.candidate_ms) row.candidate_ms = v.candidate_ms->median_ms;
        rows.push_back(row);
      }
    }
    run.samples = static_cast<int64_t>(rows.size());
    run.overall = {{"problems", problems},
                   {"samples", rows.size()},
                   {"pass_at_1", static_cast<double>(ok) / rows.size()},
                   {"avg_at_k", static_cast<double>(ok) / rows.size()}};
    run.results = {{"run", {{"model", run.model}, {"samples_root", "samples"}}}};
    if (auto w = store.PutTexts(texts); !w.ok()) {
      std::cerr << w.message() << "\n";
      return 3;
    }
    auto id = store.RecordRun(run, rows);
    if (!id.ok()) {
      std::cerr << id.status().message() << "\n";
      return 3;
    }
    std::cout << "run " << *id << " " << rows.size() << " samples\n";
  }
  std::cout << "cheat_key " << cheat_key << "\nok_key " << ok_key << "\n";
  return 0;
}
