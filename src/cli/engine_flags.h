// Flags shared by `kforge serve` and `kforge worker`: how candidates are evaluated.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <string>
#include <vector>

#include "eval/eval.h"

namespace kf::cli {

struct EngineFlags {
  std::string backend;
  std::string python;
  std::string cache_dir;
  int build_workers = 0;
  std::vector<int> devices;
  int trials = 5;
  bool no_baselines = false;
  double timing_budget_ms = 2000;
  int call_timeout_s = 60;
  int load_timeout_s = 120;
  bool allow_libraries = false;
};

void AddEngineFlags(CLI::App* app, EngineFlags* f);
eval::EvalOptions ToEvalOptions(const EngineFlags& f);

// SIGINT and SIGTERM set the returned flag (installed once per process).
const std::atomic<bool>& StopOnSignals();

}  // namespace kf::cli
