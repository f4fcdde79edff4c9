#include "cli/eval_flags.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "backend/backend.h"
#include "common/tolerance.h"

namespace kf::cli {

int Cores() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

eval::EvalOptions ToEvalOptions(const EvalFlags& f) {
  eval::EvalOptions opt;
  opt.backend = f.backend.empty() ? backend::DefaultBackend() : f.backend;
  opt.device_index = f.device;
  opt.devices = f.devices;
  if (f.many_lanes && opt.devices.empty()) opt.devices = DefaultDevices(opt.backend);
  opt.python = f.python.empty() ? eval::DefaultPython() : f.python;
  // Absolute: the build worker and the compiler wrappers it writes run in other folders (a
  // relative --cache made every build fail, and that failure was cached as the candidate's).
  opt.cache_dir = std::filesystem::absolute(
      f.cache_dir.empty() ? eval::DefaultCacheDir() : std::filesystem::path(f.cache_dir));
  opt.runner_dir = eval::FindRunnerDir();
  opt.build_workers = f.build_workers > 0 ? f.build_workers : Cores();
  opt.light_headers = f.light_headers;
  opt.split_build = f.split_build;
  opt.cached_bindings = f.cached_bindings;
  opt.prestart_host = f.prestart_host;
  opt.baselines = !f.no_baselines;
  opt.reward.significance = !f.no_significance;
  opt.exec.trials = f.trials;
  opt.exec.seed = f.seed;
  opt.exec.tolerances = DefaultTolerances(f.atol, f.rtol);
  opt.exec.timing.budget_ms = f.timing_budget_ms;
  opt.exec.call_timeout = std::chrono::seconds(f.call_timeout_s);
  opt.exec.load_timeout = std::chrono::seconds(f.load_timeout_s);
  opt.exec.allow_libraries = f.allow_libraries;
  opt.exec.policy = execute::ParsePolicy(f.policy).value_or(execute::Policy::kStrict);
  opt.allowlist = f.allowlist;
  (void)backend::ParseFamilyChoice(f.family, &opt.family);  // the flag's check admits only these
  // Now, so that the settings digest (job ids) covers the list; Evaluator::Create reports a
  // list it cannot read.
  (void)eval::LoadPolicy(&opt);
  return opt;
}

std::vector<int> DefaultDevices(const std::string& backend) {
  const backend::Device* d = backend::FindDevice(backend);
  return d ? backend::VisibleDevices(*d) : std::vector<int>{0};
}

void AddEvalFlags(CLI::App* app, EvalFlags* f, Lanes lanes) {
  app->add_option("--backend", f->backend, "cuda or cpu (default: cuda where a GPU is visible)")
      ->check(CLI::IsMember(backend::DeviceNames()));
  app->add_option("--python", f->python,
                  "Python interpreter with PyTorch (default: $KFORGE_PYTHON, python3, "
                  "/usr/bin/python3: the first that has torch)");
  app->add_option("--cache", f->cache_dir,
                  "cache folder: artifacts, the store, problems sent with jobs (default: "
                  "$KFORGE_CACHE or ~/.cache/kforge); share it between workers to build each "
                  "extension once");
  app->add_option("--build-workers", f->build_workers,
                  "concurrent compiles (default: one per core)")
      ->check(CLI::PositiveNumber);
  app->add_flag("--light-headers,!--plain-headers", f->light_headers,
                "--light-headers (the default): compile CUDA sources with torch/types.h in place "
                "of their first torch/extension.h, building again as written on any failure "
                "(about half of nvcc's CPU; the same SASS on sm_90); --plain-headers: build them "
                "as written");
  app->add_flag("--split-build,!--no-split-build", f->split_build,
                "--split-build (the default): compile a CUDA candidate's kernels without torch's "
                "headers and its host code against the precompiled header, kernel launches "
                "through generated stubs; any candidate the split cannot be sure of, or whose "
                "split build fails, is built the usual way (the same device code on sm_90); "
                "--no-split-build: always the usual way");
  app->add_flag("--cached-bindings", f->cached_bindings,
                "compile a load_inline main.cpp's PYBIND11_MODULE apart from the candidate's "
                "code and link its kept object into every later candidate that binds functions "
                "of the same signatures, whatever their names and the extension's; any other "
                "candidate, or one whose split fails, is built as load_inline writes it");
  app->add_flag("--prestart-host", f->prestart_host,
                "fork the next candidate's process as each candidate's run begins, so its start "
                "(on a GPU, CUDA's initialisation) overlaps that run; it runs nothing of the "
                "next candidate's until that run begins");
  if (lanes == Lanes::kOne) {
    app->add_option("--device", f->device, "GPU index (default 0)")
        ->check(CLI::NonNegativeNumber);
  } else {
    f->many_lanes = true;
    app->add_option("--devices", f->devices,
                    "GPU indices I,J,..., one execution lane each (default: every visible GPU; "
                    "one lane on cpu)")
        ->delimiter(',');
  }
  AddVerdictFlags(app, f);
}

void AddTrialSeedFlag(CLI::App* app, EvalFlags* f) {
  app->add_option("--seed", f->seed,
                  "secret seed of the trials (default: fresh from the OS; fix it to reproduce "
                  "a run)");
}

void AddVerdictFlags(CLI::App* app, EvalFlags* f) {
  app->add_option("--trials", f->trials, "seeded correctness trials (5)")
      ->check(CLI::Range(1, 100));
  app->add_option("--atol", f->atol,
                  "absolute tolerance for float32 outputs (1e-4; KernelBench v0 used 1e-2)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--rtol", f->rtol,
                  "relative tolerance for float32 outputs (1e-4; KernelBench v0 used 1e-2)")
      ->check(CLI::NonNegativeNumber);
  app->add_flag("--no-baselines", f->no_baselines,
                "skip timing eager and torch.compile (no speedups: Faster Rate and fast_p>0 are 0)");
  app->add_flag("--no-significance", f->no_significance,
                "count a speedup (reward bonus, Faster Rate, fast_p) by its point estimate, not "
                "only when its 95% interval clears the threshold (verdicts before format 8)");
  app->add_option("--timing-budget-ms", f->timing_budget_ms,
                  "sampled time after which timing stops even if noisy (2000)")
      ->check(CLI::PositiveNumber);
  app->add_option("--call-timeout-s", f->call_timeout_s,
                  "a candidate call running longer than this ends as timeout (60)")
      ->check(CLI::Range(1, 3600));
  app->add_option("--load-timeout-s", f->load_timeout_s,
                  "importing the candidate and building ModelNew, builds excluded (120)")
      ->check(CLI::Range(1, 3600));
  AddRuleFlags(app, f);
}

void AddRuleFlags(CLI::App* app, EvalFlags* f) {
  app->add_flag("--allow-libraries", f->allow_libraries,
                "allow cuBLAS/cuDNN/CUTLASS and ATen compute called from kernel sources");
  app->add_option("--policy", f->policy,
                  "strict (default; MooreEval's: only allowlisted plumbing ATen ops beside your "
                  "kernels) or kernelbench (KernelBench's: PyTorch may compute parts of the "
                  "model; the verdict lists which ops)")
      ->check(CLI::IsMember({"strict", "kernelbench"}));
  app->add_option("--family", f->family,
                  "the candidates' kernel family: auto (default: triton for a program of "
                  "@triton.jit kernels without load_inline, else load_inline), load_inline or "
                  "triton")
      ->check(CLI::IsMember({"auto", "load_inline", "kernelbench", "triton"}));
  app->add_option("--allowlist", f->allowlist,
                  "the strict policy's ATen allowlist file (default: "
                  "runner/policies/strict_allowed_aten.txt)")
      ->check(CLI::ExistingFile);
}

}  // namespace kf::cli
