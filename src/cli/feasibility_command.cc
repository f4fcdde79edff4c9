// kforge feasibility: can every problem of a benchmark be evaluated on this machine? Runs the
// whole protocol (trials, timing) with each problem's own reference standing in for the
// candidate, and reports per problem the device memory the judge and the candidate process
// took, the time per trial and per timed call, and whether it fit. Resumable: rows already in
// --out for the same problem text are kept, except kforge's own failures (infra_error).
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "bench/discover.h"
#include "bench/feasibility.h"
#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "common/files.h"
#include "common/hash.h"
#include "eval/eval.h"
#include "pipeline/pipeline.h"

namespace kf::cli {
namespace {

struct FeasibilityFlags {
  std::vector<std::string> paths;
  std::string out = "feasibility.jsonl";
  bool json = false;
  EvalFlags eval;
};

std::string GiB(int64_t bytes) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / (1 << 30);
  return o.str();
}

// Rows of an earlier run, by problem hash; infrastructure failures are tried again.
std::map<std::string, nlohmann::json> Earlier(const std::string& path) {
  std::map<std::string, nlohmann::json> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || j.value("status", "") == "infra_error") continue;
    rows[j.value("problem_hash", "")] = j;
  }
  return rows;
}

int RunFeasibility(const FeasibilityFlags& f) {
  std::vector<std::filesystem::path> roots(f.paths.begin(), f.paths.end());
  auto problems = bench::FindProblems(roots);
  if (!problems.ok()) {
    std::cerr << "kforge feasibility: " << problems.status().message() << "\n";
    return kExitUsage;
  }
  eval::EvalOptions opt = ToEvalOptions(f.eval);
  // The candidate is the problem's own reference: trusted code, so no legality rules.
  opt.reference_as_candidate = true;
  opt.exec.runtime_rules = false;
  opt.baselines = false;  // the reference's time is the timed call's
  // Through the one engine, one problem at a time (their memory is measured one by one): no
  // warming of others on the lane, no stored verdicts.
  auto made = pipeline::MakePipeline(opt, pipeline::InOrder());
  if (!made.ok()) {
    std::cerr << "kforge feasibility: " << made.status().message() << "\n";
    return kExitInfra;
  }
  pipeline::Pipeline& engine = **made;
  auto earlier = Earlier(f.out);
  std::ofstream out(f.out, std::ios::app);
  if (!out) {
    std::cerr << "kforge feasibility: cannot write " << f.out << "\n";
    return kExitInfra;
  }
  int fit = 0, failed = 0, oom = 0, infra = 0, kept = 0;
  for (const auto& p : *problems) {
    // An unreadable problem is evaluated all the same: its row says infra_error and why.
    auto read = ReadFile(p.path);
    const std::string text = read.ok() ? *read : std::string();
    nlohmann::json row;
    if (auto it = earlier.find(Sha256Hex(text)); it != earlier.end()) {
      row = it->second;
      ++kept;
    } else {
      Verdict v = engine.Evaluate({p.path, text + "\n\nclass ModelNew(Model):\n    pass\n"});
      row = bench::ToJson(bench::FeasibilityOf(v));
      row["path"] = p.path.string();
      out << row.dump() << std::endl;  // flushed per problem: a killed run keeps its rows
    }
    bool fits = row.value("fits", false);
    fit += fits ? 1 : 0;
    failed += fits ? 0 : 1;
    oom += row.value("out_of_memory", false) ? 1 : 0;
    infra += row.value("status", "") == "infra_error" ? 1 : 0;
    if (f.json) {
      std::cout << row.dump() << std::endl;
      continue;
    }
    std::cout << (fits ? "fits  " : "FAIL  ") << std::left << std::setw(48) << p.level + "/" + p.stem
              << " judge " << GiB(row.value("judge_peak_bytes", int64_t{0})) << " GiB, candidate "
              << GiB(row.value("candidate_peak_bytes", int64_t{0})) << " GiB, "
              << std::setprecision(4) << row.value("ms_per_trial", 0.0) << " ms/trial, "
              << row.value("timed_call_ms", 0.0) << " ms/call, " << row.value("input_sets", 0)
              << " sets";
    if (!fits) std::cout << "  [" << row.value("status", "") << "] " << row.value("message", "").substr(0, 300);
    std::cout << std::endl;
  }
  if (!f.json) {
    std::cout << problems->size() << " problems: " << fit << " fit, " << failed << " did not ("
              << infra << " infra_error, " << oom << " out of memory); " << kept
              << " from an earlier run in " << f.out << std::endl;
  }
  return kExitOk;
}

}  // namespace

Command FeasibilityCommand() {
  return {"feasibility",
          "Run every problem's reference through the whole protocol: does it fit this machine?",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<FeasibilityFlags>();
            app->add_option("paths", f->paths, "problem files or KernelBench level folders")
                ->required();
            app->add_option("--out", f->out,
                            "JSON Lines of results, appended; problems already there are kept "
                            "(default feasibility.jsonl)");
            app->add_flag("--json", f->json, "print one JSON line per problem");
            AddEvalFlags(app, &f->eval, Lanes::kOne);
            AddTrialSeedFlag(app, &f->eval);
            return [f] { return RunFeasibility(*f); };
          }};
}

}  // namespace kf::cli
