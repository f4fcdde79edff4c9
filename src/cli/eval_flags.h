// What every command that evaluates candidates (eval, bench, feasibility, serve, worker,
// generate, mcp) reads from its flags: declared here once, with one help text each
// (AddEvalFlags), and turned into eval::EvalOptions by one function (ToEvalOptions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "eval/eval.h"

namespace kf::cli {

struct EvalFlags {
  bool many_lanes = false;  // set by AddEvalFlags: --devices, every visible GPU by default
  std::string backend;    // "" : cuda where a GPU is visible, else cpu
  std::string python;     // "" : eval::DefaultPython()
  std::string cache_dir;  // "" : eval::DefaultCacheDir()
  int device = 0;             // the lane's GPU when `devices` is empty
  std::vector<int> devices;   // one lane per GPU index
  int build_workers = 0;      // 0: one per core
  bool light_headers = true;  // eval::EvalOptions::light_headers (--plain-headers turns it off)
  bool split_build = true;    // eval::EvalOptions::split_build (--no-split-build turns it off)
  bool cached_bindings = false;  // eval::EvalOptions::cached_bindings
  bool prestart_host = false;    // eval::EvalOptions::prestart_host
  int trials = 5;
  uint64_t seed = 0;          // 0: fresh from the OS (--seed: eval, bench, feasibility only)
  double atol = -1, rtol = -1;  // float32 tolerances; negative: DefaultTolerances'
  bool no_baselines = false;
  bool no_significance = false;  // speed bonus, Faster Rate and fast_p from point estimates
  double timing_budget_ms = 2000;
  int call_timeout_s = 60;
  int load_timeout_s = 120;
  bool allow_libraries = false;
  std::string policy = "strict";  // execute/policy.h
  std::string family = "auto";    // auto, load_inline or triton (backend::ParseFamilyChoice)
  std::string allowlist;          // "" : kforge's runner/policies/strict_allowed_aten.txt
};

eval::EvalOptions ToEvalOptions(const EvalFlags& f);

// How many execution lanes a command offers: one GPU (`--device I`: eval, feasibility,
// generate, mcp) or one lane per GPU (`--devices I,J`: bench, serve, worker; default every GPU
// CUDA_VISIBLE_DEVICES or /dev/nvidiaN shows).
enum class Lanes { kOne, kMany };
// Where and how candidates are evaluated: --backend --python --cache --build-workers,
// --device or --devices, and the verdict flags below.
void AddEvalFlags(CLI::App* app, EvalFlags* f, Lanes lanes);
// --seed, the secret seed of the trials: only for commands a user runs to reproduce a verdict
// (eval, bench, feasibility). A service never takes one: fixed trial inputs could be learned.
void AddTrialSeedFlag(CLI::App* app, EvalFlags* f);
// The GPUs used when --devices is not given: those CUDA_VISIBLE_DEVICES names, else every
// /dev/nvidiaN (one lane on cpu).
std::vector<int> DefaultDevices(const std::string& backend);

// The flags that shape a verdict (trials, tolerances, baselines, timing, timeouts, libraries),
// part of AddEvalFlags.
void AddVerdictFlags(CLI::App* app, EvalFlags* f);
// The part of those that decides what is legal (--allow-libraries, --policy, --allowlist,
// --family), for commands that only check (kforge check).
void AddRuleFlags(CLI::App* app, EvalFlags* f);

// Online processors (at least 1): the default number of compiles, and of bench's build threads.
int Cores();

}  // namespace kf::cli
