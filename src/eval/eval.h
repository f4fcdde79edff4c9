// eval: the whole pipeline for one candidate, in process: extract -> build -> execute -> score.
// Owns a Builder, one Lane and the store; keeps problems and baselines loaded between calls,
// so evaluating many candidates of one problem pays the start-up once.
// Not thread-safe (one lane); bench runs several Evaluators' stages on its own threads.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "common/status.h"
#include "execute/execute.h"
#include "score/score.h"
#include "score/verdict.h"

namespace kf::eval {

struct EvalOptions {
  std::string backend = "cpu";            // "cpu" or "cuda"
  int device_index = 0;
  std::string python = "python3";         // the interpreter that has PyTorch
  std::filesystem::path cache_dir;        // artifacts, store, logs
  std::filesystem::path runner_dir;       // the kforge_runner package
  int build_workers = 2;
  bool baselines = true;                  // time eager and torch.compile references
  // A speedup over eager above this is measured again in a fresh candidate process before it
  // counts; the slower of the two runs is reported.
  double reverify_speedup = 10.0;
  execute::ExecOptions exec;
  score::RewardOptions reward;
};

class Evaluator {
 public:
  static Result<std::unique_ptr<Evaluator>> Create(const EvalOptions& opt);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Always returns a verdict; problems with the system itself are status infra_error.
  Verdict Evaluate(const std::filesystem::path& problem_path, const std::string& candidate_text);

 private:
  class Impl;
  explicit Evaluator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Where things are when the user does not say: $KFORGE_CACHE, else $XDG_CACHE_HOME/kforge,
// else ~/.cache/kforge.
std::filesystem::path DefaultCacheDir();
// $KFORGE_RUNNER_DIR, else runner/ beside or above the executable, else the source tree.
std::filesystem::path FindRunnerDir();
// "cuda" when an NVIDIA GPU is visible (/dev/nvidia0 or nvidia-smi), else "cpu".
std::string DefaultBackend();
// The first of $KFORGE_PYTHON, python3, /usr/bin/python3 that has torch installed.
std::string DefaultPython();
// "level1/relu" for .../level1/relu.py; the file stem otherwise.
std::string ProblemId(const std::filesystem::path& problem_path);

}  // namespace kf::eval
