// eval: the whole pipeline for one candidate, in process: extract -> build -> execute -> score.
// Owns its parts (a builder, its lanes, the store, a clock: eval/parts.h); keeps problems and
// baselines loaded between calls, so evaluating many candidates of one problem pays the
// start-up once.
// Prepare (CPU stages) is thread-safe; Execute runs on one of the lanes (one per GPU).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "common/status.h"
#include "execute/execute.h"
#include "extract/extract.h"
#include "score/score.h"
#include "score/verdict.h"

namespace kf::eval {

struct EvalOptions {
  std::string backend = "cpu";            // "cpu" or "cuda" (backend::DeviceNames)
  // The candidates' kernel family (--family); nothing: detected from each candidate's text
  // (extract::Extract). Part of the verdict settings.
  std::optional<backend::Family> family;
  int device_index = 0;
  // One execution lane per entry (GPU indices); empty means one lane on device_index.
  std::vector<int> devices;
  // False: no lanes and no timing helper, only Prepare (a build worker of the distributed
  // service compiles and never runs a candidate). Execute then answers infra_error for
  // anything not already decided, and Describe and Warm fail.
  bool lanes = true;
  std::string python = "python3";         // the interpreter that has PyTorch
  std::filesystem::path cache_dir;        // artifacts, store, logs
  std::filesystem::path runner_dir;       // the kforge_runner package
  int build_workers = 2;
  // Precompiled torch/extension.h for builds (build::BuildOptions::pch); $KFORGE_NO_PCH=1
  // turns it off for a whole process, e.g. to measure what it saves.
  bool pch = true;
  // Compile cuda.cu without torch/extension.h where the candidate's code allows, falling back
  // to the build as written (build::BuildOptions::light_headers). On by default since an H100
  // (sm_90, the H200's architecture, nvcc 13.0) showed identical SASS for all 68 extensions of
  // the CUDA examples and red team with device code (docs/gpu-runs/README.md, 2026-12-05):
  // not part of the verdict settings, so a verdict has one key either way.
  bool light_headers = true;
  // Split builds (build::BuildOptions::split_build): on by default since an H100 (sm_90, torch
  // 2.11, nvcc 13) built 49 of 49 planned units of our CUDA examples and red team and 81 of 81
  // public model-written kernels split with device code identical to the usual build's, none
  // split where the usual build failed, and the red team and corpus verdicts held
  // (docs/gpu-runs/README.md, 2026-12-06): not part of the verdict settings, as light headers.
  bool split_build = true;
  // Cached bindings (build::BuildOptions::cached_bindings): opt-in. They save a compile only
  // where candidates bind the same functions under the same extension name (an RL group's
  // samples), and cost one where they do not (PERFORMANCE.md, "Cached bindings"). The same
  // code in two units: not a verdict setting, as light headers are not.
  bool cached_bindings = false;
  // Each lane forks the next candidate's host as a run begins (execute::LaneOptions::
  // prestart_host): opt-in until a GPU shows the timing unmoved by a spare starting CUDA
  // beside it. The same candidate process either way: not a verdict setting.
  bool prestart_host = false;
  bool baselines = true;                  // time eager and torch.compile references
  // The candidate is the problem's own reference (`kforge feasibility`): trusted code that
  // builds no kernel, so neither a load_inline call nor the static rules are asked of it
  // (set exec.runtime_rules = false too).
  bool reference_as_candidate = false;
  // A speedup over eager above this is measured again in a fresh candidate process before it
  // counts; the slower of the two runs is reported.
  double reverify_speedup = 10.0;
  execute::ExecOptions exec;
  score::RewardOptions reward;
  // The strict policy's allowlist file; "" is kforge's (runner/policies/). Read into
  // exec.allowed_aten by LoadPolicy.
  std::filesystem::path allowlist;
};

// Reads the allowlist into opt->exec.allowed_aten unless it is already there. Both policies use
// it: strict to decide H01, kernelbench to tell plumbing from the compute the verdict lists.
Status LoadPolicy(EvalOptions* opt);

// A candidate after the CPU-bound stages (extract, static legality, build). Either final, its
// verdict decided (format_error, cheat, compile_error, infra_error), or ready for a lane.
struct Prepared {
  Verdict verdict;  // problem and candidate ids, stages and diagnostics so far
  bool final = false;
  std::filesystem::path problem_path;
  std::string text;
  std::string job_key;  // the store's key (VerdictKey); empty when the environment is unknown
  extract::Candidate candidate;
  // False: the problem's text came with a request (a reward service's inline problem); it runs
  // only in a confined judge of its own (execute::Lane::LoadProblem).
  bool problem_trusted = true;
};

struct EvaluatorParts;  // eval/parts.h

class Evaluator {
 public:
  // The production Evaluator: makes the cache folder, checks the runner is there, reads the
  // policy (LoadPolicy), then works through the real parts (RealParts: the store, a Builder,
  // a Lane per device).
  static Result<std::unique_ptr<Evaluator>> Create(const EvalOptions& opt);
  // An Evaluator that works through `parts` (eval/parts.h; builder and store required), e.g.
  // fakes in tests. Reads the policy like Create, but makes no folder and checks no runner:
  // `opt`'s paths reach only the parts. With lanes, starts building the timing helper
  // (ArtifactBuilder::BuildNative) in the background at once.
  static Result<std::unique_ptr<Evaluator>> CreateWith(const EvalOptions& opt,
                                                       EvaluatorParts parts);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Always returns a verdict; problems with the system itself are status infra_error.
  // Prepare then Execute on lane 0.
  Verdict Evaluate(const std::filesystem::path& problem_path, const std::string& candidate_text);

  // The two halves, for pipelines. Prepare is thread-safe and uses no lane (builds run on the
  // shared build pool). Execute runs a prepared candidate on one lane and stores its verdict;
  // calls on different lanes may overlap, calls on the same lane must not. A final Prepared is
  // scored and stored without touching the lane.
  // `problem_trusted`: see Prepared::problem_trusted.
  Prepared Prepare(const std::filesystem::path& problem_path, const std::string& candidate_text,
                   bool problem_trusted = true);
  Verdict Execute(Prepared p, int lane = 0);
  int lanes() const;

  // What the judge measured for a problem (shapes, dtypes and strides of one draw of inputs
  // and of the reference outputs) and the lane's device name, for prompts. Uses the lane like
  // Execute does: calls on the same lane must not overlap.
  struct ProblemFacts {
    execute::ProblemInfo info;
    std::string device;
  };
  Result<ProblemFacts> Describe(const std::filesystem::path& problem_path, int lane = 0);

  // Does on `lane` the per-problem work the first passing candidate would otherwise do there:
  // loads the reference and its outputs and, with baselines on, calls it once in each mode so
  // torch.compile has compiled (LaneRunner::WarmReference). Nothing is timed: candidates'
  // speedups come from the reference's batches interleaved with theirs. Same lane rules as
  // Execute.
  Status Warm(const std::filesystem::path& problem_path, int lane = 0,
              bool problem_trusted = true);

  // The stored verdict for this problem and candidate, if one was stored before (by any
  // process sharing the cache). Infrastructure failures are never stored.
  std::optional<Verdict> Lookup(const std::filesystem::path& problem_path,
                                const std::string& candidate_text);
  // The key Execute stores this problem's and candidate's verdict under (VerdictKey; the
  // hashes are SHA-256 of their texts, as in the verdict): how `kforge bench` records which
  // verdicts a run had. "" when the toolchain cannot be fingerprinted (nothing is stored).
  std::string StoreKey(const std::string& problem_hash, const std::string& candidate_hash);

 private:
  class Impl;
  explicit Evaluator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The static stage's findings for a candidate of a problem (its text) under `opt`'s rules,
// libraries and policy: what Prepare records, and what `kforge check` prints. An error finding
// ends the verdict as cheat; the others are notes. Pure: runs nothing.
std::vector<Diagnostic> StaticFindings(const extract::Candidate& c, const std::string& problem_text,
                                       const EvalOptions& opt);

// Where things are when the user does not say: $KFORGE_CACHE, else $XDG_CACHE_HOME/kforge,
// else ~/.cache/kforge.
std::filesystem::path DefaultCacheDir();
// $KFORGE_RUNNER_DIR, else runner/ beside or above the executable, else the source tree.
std::filesystem::path FindRunnerDir();
// The first of $KFORGE_PYTHON, python3, /usr/bin/python3 that has torch installed.
std::string DefaultPython();
// "level1/relu" for .../level1/relu.py; the file stem otherwise.
std::string ProblemId(const std::filesystem::path& problem_path);
// Everything in `opt` that can change a verdict (backend, trials, seed, tolerances, rules,
// libraries, baselines, timing, timeouts, reward), as JSON. A new option that shapes verdicts
// is added here and nowhere else.
nlohmann::json VerdictSettings(const EvalOptions& opt);
// SHA-256 of VerdictSettings(opt): what jobs carry, so a worker can refuse one queued under
// other settings than its own.
std::string SettingsDigest(const EvalOptions& opt);
// A job's identity in the reward service: problem and candidate contents and the settings.
std::string JobKey(const std::string& problem_hash, const std::string& candidate_hash,
                   const std::string& settings_digest);
// The verdict store's key, used by every command through the Evaluator: the job's identity
// plus the environment that ran it (toolchain fingerprint: Python, torch, compilers, CUDA
// arch; and the device model). Verdicts made elsewhere, or with other options, never match.
std::string VerdictKey(const std::string& problem_hash, const std::string& candidate_hash,
                       const std::string& settings_digest, const nlohmann::json& environment);

}  // namespace kf::eval
