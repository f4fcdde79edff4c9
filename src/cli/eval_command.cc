// kforge eval: verify and time one candidate, print one verdict.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "eval/eval.h"

namespace kf::cli {
namespace {

struct EvalFlags {
  std::string problem;
  std::vector<std::string> candidates;
  std::string backend;
  std::string python;
  std::string cache_dir;
  bool json = false;
  int trials = 5;
  uint64_t seed = 0;
  double atol = -1, rtol = -1;
  int device = 0;
  int build_workers = 0;
  bool no_baselines = false;
  double timing_budget_ms = 2000;
  int call_timeout_s = 60;
  int load_timeout_s = 120;
  bool allow_libraries = false;
};

bool ReadAll(const std::string& path, std::string* out) {
  if (path == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    *out = ss.str();
    return true;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

int RunEval(const EvalFlags& f) {
  std::vector<std::string> texts;
  for (const auto& c : f.candidates) {
    std::string text;
    if (!ReadAll(c, &text)) {
      std::cerr << "kforge eval: cannot read candidate " << c << "\n";
      return kExitUsage;
    }
    texts.push_back(std::move(text));
  }
  if (!std::filesystem::is_regular_file(f.problem)) {
    std::cerr << "kforge eval: cannot read problem " << f.problem << "\n";
    return kExitUsage;
  }
  eval::EvalOptions opt;
  opt.backend = f.backend.empty() ? eval::DefaultBackend() : f.backend;
  opt.device_index = f.device;
  opt.python = f.python.empty() ? eval::DefaultPython() : f.python;
  opt.cache_dir = f.cache_dir.empty() ? eval::DefaultCacheDir() : std::filesystem::path(f.cache_dir);
  opt.runner_dir = eval::FindRunnerDir();
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  opt.build_workers = f.build_workers > 0 ? f.build_workers : static_cast<int>(cores > 0 ? cores : 1);
  opt.baselines = !f.no_baselines;
  opt.exec.trials = f.trials;
  opt.exec.seed = f.seed;
  opt.exec.timing.budget_ms = f.timing_budget_ms;
  opt.exec.call_timeout = std::chrono::seconds(f.call_timeout_s);
  opt.exec.load_timeout = std::chrono::seconds(f.load_timeout_s);
  opt.exec.allow_libraries = f.allow_libraries;
  if (f.atol >= 0) opt.exec.atol["float32"] = f.atol;
  if (f.rtol >= 0) opt.exec.rtol["float32"] = f.rtol;

  auto ev = eval::Evaluator::Create(opt);
  if (!ev.ok()) {
    std::cerr << "kforge eval: " << ev.status().message() << "\n";
    return kExitInfra;
  }
  // Several candidates share one lane: one judge, one zygote, problems loaded once.
  int rc = kExitOk;
  bool color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr;
  for (size_t i = 0; i < texts.size(); ++i) {
    Verdict v = (*ev)->Evaluate(f.problem, texts[i]);
    if (f.json) {
      // One candidate: the verdict, indented. Several: one verdict per line (JSON Lines).
      std::cout << (texts.size() == 1 ? ToJson(v).dump(2) : ToJson(v).dump()) << std::endl;
    } else {
      if (texts.size() > 1) std::cout << "== " << f.candidates[i] << "\n";
      std::cout << score::Render(v, color) << std::flush;
    }
    if (v.status == VerdictStatus::kInfraError) {
      std::cerr << "kforge eval: infrastructure failure: "
                << (v.diagnostics.empty() ? "" : v.diagnostics.back().message) << "\n";
      rc = kExitInfra;
    }
  }
  return rc;
}

}  // namespace

Command EvalCommand() {
  return {"eval", "Verify and time one candidate against one problem; print its verdict",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<EvalFlags>();
            app->add_option("--problem", f->problem, "KernelBench-format problem file")->required();
            app->add_option("--candidate", f->candidates,
                            "candidate file or model reply ('-' reads standard input); repeat "
                            "to evaluate several in one lane")
                ->required();
            app->add_option("--backend", f->backend,
                            "cuda or cpu (default: cuda where a GPU is visible)")
                ->check(CLI::IsMember({"cuda", "cpu"}));
            app->add_option("--python", f->python,
                            "Python interpreter with PyTorch (default: $KFORGE_PYTHON, python3, "
                            "/usr/bin/python3)");
            app->add_flag("--json", f->json, "print only the verdict JSON");
            app->add_option("--trials", f->trials, "seeded correctness trials")
                ->check(CLI::Range(1, 100));
            app->add_option("--seed", f->seed, "secret seed (default: fresh from the OS)");
            app->add_option("--atol", f->atol, "absolute tolerance for float32 outputs (1e-4)");
            app->add_option("--rtol", f->rtol, "relative tolerance for float32 outputs (1e-4)");
            app->add_option("--device", f->device, "GPU index")->check(CLI::NonNegativeNumber);
            app->add_option("--build-workers", f->build_workers,
                            "concurrent compiles (default: one per core)");
            app->add_option("--cache", f->cache_dir, "cache folder (default: ~/.cache/kforge)");
            app->add_flag("--no-baselines", f->no_baselines,
                          "skip timing eager and torch.compile references");
            app->add_option("--timing-budget-ms", f->timing_budget_ms,
                            "sampled time after which timing stops even if noisy")
                ->check(CLI::PositiveNumber);
            app->add_option("--call-timeout-s", f->call_timeout_s,
                            "a candidate call running longer than this ends as timeout (60)")
                ->check(CLI::Range(1, 3600));
            app->add_option("--load-timeout-s", f->load_timeout_s,
                            "importing the candidate and building ModelNew, builds excluded (120)")
                ->check(CLI::Range(1, 3600));
            app->add_flag("--allow-libraries", f->allow_libraries,
                          "allow cuBLAS/cuDNN/CUTLASS and ATen compute called from kernel sources");
            return [f] { return RunEval(*f); };
          }};
}

}  // namespace kf::cli
