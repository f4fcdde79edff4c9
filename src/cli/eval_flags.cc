#include "cli/eval_flags.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

namespace kf::cli {

int Cores() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

eval::EvalOptions ToEvalOptions(const EvalFlags& f) {
  eval::EvalOptions opt;
  opt.backend = f.backend.empty() ? eval::DefaultBackend() : f.backend;
  opt.device_index = f.device;
  opt.devices = f.devices;
  opt.python = f.python.empty() ? eval::DefaultPython() : f.python;
  opt.cache_dir =
      f.cache_dir.empty() ? eval::DefaultCacheDir() : std::filesystem::path(f.cache_dir);
  opt.runner_dir = eval::FindRunnerDir();
  opt.build_workers = f.build_workers > 0 ? f.build_workers : Cores();
  opt.baselines = !f.no_baselines;
  opt.exec.trials = f.trials;
  opt.exec.seed = f.seed;
  opt.exec.timing.budget_ms = f.timing_budget_ms;
  opt.exec.call_timeout = std::chrono::seconds(f.call_timeout_s);
  opt.exec.load_timeout = std::chrono::seconds(f.load_timeout_s);
  opt.exec.allow_libraries = f.allow_libraries;
  return opt;
}

}  // namespace kf::cli
