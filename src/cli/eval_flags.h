// What every command that evaluates candidates (eval, bench, serve, worker, generate, mcp) reads
// from its flags, and the one conversion into eval::EvalOptions. Each command declares the flags
// it offers itself (the help texts and which of --device/--devices differ per command).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "eval/eval.h"

namespace kf::cli {

struct EvalFlags {
  std::string backend;    // "" : cuda where a GPU is visible, else cpu
  std::string python;     // "" : eval::DefaultPython()
  std::string cache_dir;  // "" : eval::DefaultCacheDir()
  int device = 0;             // the lane's GPU when `devices` is empty
  std::vector<int> devices;   // one lane per GPU index
  int build_workers = 0;      // 0: one per core
  int trials = 5;
  uint64_t seed = 0;          // 0: fresh from the OS
  double atol = -1, rtol = -1;  // float32 tolerances; negative: the judge's (1e-4)
  bool no_baselines = false;
  double timing_budget_ms = 2000;
  int call_timeout_s = 60;
  int load_timeout_s = 120;
  bool allow_libraries = false;
  std::string policy = "strict";  // execute/policy.h
  std::string allowlist;          // "" : kforge's runner/policies/strict_allowed_aten.txt
};

eval::EvalOptions ToEvalOptions(const EvalFlags& f);

// The flags that shape a verdict (trials, tolerances, baselines, timing, timeouts, libraries),
// with one help text each, for every command that evaluates. --seed is the caller's: in
// `generate` and `mcp` it seeds the model's sampling.
void AddVerdictFlags(CLI::App* app, EvalFlags* f);
// The part of those that decides what is legal (--allow-libraries, --policy, --allowlist), for
// commands that only check (kforge check).
void AddRuleFlags(CLI::App* app, EvalFlags* f);

// Online processors (at least 1): the default number of compiles, and of bench's build threads.
int Cores();

}  // namespace kf::cli
