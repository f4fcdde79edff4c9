// execute: one execution lane per device. A lane owns a long-lived judge process (trusted:
// problem, inputs, reference outputs, comparison, baseline timing) and a zygote that forks a
// fresh candidate process per candidate. Every wait has a deadline here, in C++; a candidate
// that crashes, hangs or lies ends its own run, never the lane.
//
// Thread-safety: a Lane serves one call at a time (one lane per GPU); use one per thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/diagnostic.h"
#include "common/status.h"
#include "common/tolerance.h"
#include "execute/memory.h"
#include "execute/policy.h"
#include "execute/timing.h"

namespace kf::execute {

struct LaneOptions {
  std::string python = "python3";
  std::filesystem::path runner_dir;
  std::string backend = "cpu";  // "cpu" or "cuda"
  int device_index = 0;
  std::filesystem::path work_dir;  // private folders of candidate processes, logs
  // import torch plus CUDA start-up; seconds on a loaded machine
  std::chrono::milliseconds start_timeout{std::chrono::minutes(3)};
  // Cores of its own for the judge, the zygote and the candidates it forks (common/affinity.h);
  // empty: every core, shared with builds.
  std::vector<int> cpus;
  // Fork the next candidate's host as each candidate's run begins, so its start (on a GPU,
  // CUDA's initialisation) overlaps this run instead of the next one's (Lane::Impl::TakeHost).
  // Opt-in: while a run is timed the spare may be starting CUDA beside it.
  bool prestart_host = false;
};

struct DeviceInfo {
  std::string device;       // "cpu" or "cuda:N"
  std::string name;         // "NVIDIA H200", the CPU model
  std::string torch_version;
  bool compile_available = false;
  nlohmann::json raw;       // everything the judge reported
};

struct ProblemInfo {
  std::string id;
  uint64_t init_seed = 0;      // the seed Model's parameters were drawn with; ModelNew gets it too
  nlohmann::json init_inputs;  // what Model(*init_inputs) was built with
  nlohmann::json inputs;       // shapes/dtypes/strides of one draw of get_inputs()
  nlohmann::json outputs;      // shapes/dtypes of the reference outputs
  // Other sizes the problem declares valid (KFORGE_SHAPE_VARIANTS): one trial each (H19).
  nlohmann::json shape_variants = nlohmann::json::array();
  // The tensors (attribute names) the problem's model keeps state in between calls, empty for
  // most: every call of it and of ModelNew then starts from their first state (state.py).
  std::vector<std::string> stateful;
  MemoryFacts memory;  // sizes and free device memory, for the timing rotation (FitTimingPool)
  // The problem file's text. The candidate module runs in a namespace that already holds the
  // problem module's names, as KernelBench's harness execs both into one dict: model-written
  // candidates use the problem's constants (batch_size, ...) without defining them.
  std::string source;
};

// How the lane asks for a load_inline extension the candidate requests at run time.
struct LoadInlineReply {
  bool ok = false;
  std::string so_path;
  std::string module_name;
  std::string message;  // when !ok: the compiler's complaint
};
using LoadInlineFn = std::function<LoadInlineReply(const nlohmann::json& args)>;

struct ExecOptions {
  int trials = 5;           // seeded correctness trials (plus an A/B/A repeat and a signed trial)
  uint64_t seed = 0;        // secret seed; 0 draws one from the OS
  // The check's atol and rtol per output dtype, sent to the judge whole (common/tolerance.h).
  Tolerances tolerances = DefaultTolerances();
  bool time_candidate = true;
  // Runtime legality: profile one forward (torch compute, vendor kernels, own extension used)
  // and one ablation call (the extension's results replaced with NaN must change the answer).
  bool runtime_rules = true;
  bool allow_libraries = false;  // cuBLAS/cuDNN/CUTLASS kernels and aten compute from C++
  Policy policy = Policy::kStrict;   // what PyTorch compute beside the kernels means (policy.h)
  std::set<std::string> allowed_aten;  // plumbing ops (the allowlist file); see eval::LoadPolicy
  TimingOptions timing;
  // Time eager and torch.compile interleaved with the candidate (ExecResult::baselines).
  bool interleave_baselines = false;
  std::chrono::milliseconds load_timeout{std::chrono::minutes(2)};  // import + __init__, builds excluded
  std::chrono::milliseconds call_timeout{std::chrono::seconds(60)};  // one forward call
  // The candidate's kernel family (extract decided it): what the host hooks before the
  // candidate's code runs, which of its reply fields counts the candidate's own kernels, the
  // words of the H02 decisions (backend::Path).
  backend::Family family = backend::Family::kLoadInline;
  // Triton: the folder its compiler caches into, the one folder outside its private one the
  // candidate may write (backend::Path::JitCacheDir). Made here when missing.
  std::filesystem::path jit_cache;
};

// The diagnostic code of an infra_error whose timing the machine's load spoiled (the host
// waited for a CPU long enough to explain a wall-clock gap): worth trying again when quieter.
inline constexpr const char* kBusyCode = "busy";
// The diagnostic code of an infra_error whose lane died under it (its judge or zygote was
// killed: out of memory, by hand): the candidate's run says nothing, worth running again on the
// lane started anew.
inline constexpr const char* kLaneDiedCode = "lane_died";

enum class Outcome { kOk, kFormatError, kCompileError, kRuntimeError, kTimeout, kIncorrect, kCheat,
                     kInfraError };

struct TimingResult {
  Summary summary;
  std::vector<double> samples_ms;
  double wall_ms = 0;     // measured here around the timed batches
  std::string stop_reason;
  double delay_us = 0;    // the GPU sleep before each timed call (ChooseDelayUs)
  double host_ms = 0;     // median host time of a timed call (the forward's Python, launches)
  int hidden = 0;         // timed calls that returned before the GPU reached their start
  // The fraction of timed calls whose host time was entirely outside their interval.
  double hidden_fraction() const {
    return samples_ms.empty() ? 0 : static_cast<double>(hidden) / samples_ms.size();
  }
};

struct BaselineResult {
  std::optional<TimingResult> eager;
  std::optional<TimingResult> compiled;
  std::string compile_unavailable;
  // Why these numbers may not be stored as the problem's baselines ("" when undisturbed):
  // BaselineDisturbed's reason. A disturbed measurement may still serve the verdict it was
  // interleaved with (its ratio cancels the disturbance), never a later one.
  std::string disturbed;
  double judge_wait_ms = 0;  // the judge's main thread waiting for a CPU during its batches
};

struct ExecResult {
  Outcome outcome = Outcome::kInfraError;
  int trials_passed = 0;
  int trials_total = 0;
  // One record per correctness trial that was checked, in order: {label, pass, max_abs_err,
  // max_rel_err, bad_elements, elements, and for a wrong one output, first_bad_index, got,
  // expected; or message when the outputs had the wrong shape or dtype}. The verdict's
  // correctness stage carries them (docs/VERDICT.md).
  nlohmann::json trials = nlohmann::json::array();
  std::vector<Diagnostic> diagnostics;  // lines are candidate-code lines (1-based)
  std::optional<TimingResult> timing;
  double load_ms = 0;
  double correctness_ms = 0;
  // Where correctness_ms went: the judge drawing inputs and running the reference, the
  // candidate's calls (the first one under the profiler, counted apart), the judge's checks.
  double prepare_ms = 0;
  double call_ms = 0;
  double profiled_call_ms = 0;
  double check_ms = 0;
  double timing_ms = 0;
  // The candidate host's main thread during the bounded timed batches (from /proc): on a CPU,
  // and runnable but waiting for one (load on the machine).
  double host_cpu_ms = 0;
  double host_wait_ms = 0;
  // The wall-clock bound's facts (JudgeWallClock): wall time per bounded call less the empty
  // call's cost (the least over its measurements), that empty call's cost, and the CPU it took
  // outside its timer (subtracted from the host's CPU per call where kernels run on the host's
  // CPUs; 0 when unread).
  double wall_gap_ms = 0;
  double noop_ms = 0;
  double noop_cpu_ms = 0;
  double spawn_ms = 0;
  bool host_prestarted = false;  // the run's host was the lane's spare (LaneOptions::prestart_host)
  // Where the load's time went in the candidate host, ms by phase (device_start, extension_wait,
  // extension_load, code, model, to_device: runner/kforge_runner/candidate.py, op_load).
  nlohmann::json load_phases_ms = nlohmann::json::object();
  bool build_failed = false;  // a run-time load_inline request, or a Triton kernel, failed to compile
  // Triton: kernels compiled in the candidate process and the time that took (the verdict's
  // build stage), and launches of its kernels the host's hooks saw.
  int jit_compiles = 0;
  double jit_compile_ms = 0;
  int jit_launches = 0;
  int input_sets = 0;          // the timing rotation's size (FitTimingPool); 0 when not timed
  // ATen compute ops outside the allowlist that ran in the profiled forward (kernelbench policy:
  // allowed and listed in the verdict; strict: these made it H01).
  std::vector<std::string> pytorch_ops;
  int64_t judge_peak_bytes = 0;  // the most device memory the judge held during the run
  int64_t candidate_peak_bytes = 0;  // the candidate process's (runs that end ok only)
  // Eager and torch.compile timed in batches interleaved with the candidate's (A/B/A), on the
  // same inputs and GPU minutes apart at most; absent unless ExecOptions::interleave_baselines.
  std::optional<BaselineResult> baselines;
  // The GPU's state when timing began and ended ({"start": {...}, "end": {...}}; NVML).
  nlohmann::json gpu = nlohmann::json::object();
  std::vector<int> lane_cpus;  // the cores reserved for the lane's processes (LaneOptions::cpus)
};


// A fresh secret seed from the OS (positive, below 2^62 so JSON carries it exactly).
uint64_t DrawSeed();

class Lane {
 public:
  // Spawns the judge and the zygote; they import torch in the background. Returns at once.
  static Result<std::unique_ptr<Lane>> Start(const LaneOptions& opt);
  ~Lane();
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  // Waits for the judge to be ready; loads the compiled helper into judge and zygote.
  Result<DeviceInfo> Ready(const std::filesystem::path& native_so, const std::string& module);
  // `trusted`: the operator's or the user's own problem file, imported by the lane's judge.
  // Otherwise its text came with a request: it is imported and run only by a judge of its own,
  // forked from the zygote and confined like a candidate (infra_error where the sandbox cannot
  // be entered); every later request about it goes there.
  Result<ProblemInfo> LoadProblem(const std::string& id, const std::filesystem::path& path,
                                  uint64_t init_seed, bool trusted = true);
  // Eager and torch.compile times of the problem's reference, with the rotation fitted to its
  // memory (FitTimingPool).
  Result<BaselineResult> TimeBaselines(const ProblemInfo& problem, const TimingOptions& opt,
                                       uint64_t seed);
  // The reference's first calls in each mode, untimed, on the same rotation as TimeBaselines:
  // torch.compile compiles in them, so a candidate's interleaved batches (A/B/A) find it
  // compiled. A torch.compile that fails is left for those batches to report.
  Status WarmReference(const ProblemInfo& problem, const TimingOptions& opt, uint64_t seed);
  ExecResult Run(const std::string& problem_id, const ProblemInfo& problem,
                 const std::string& code, const LoadInlineFn& load_inline,
                 const ExecOptions& opt);
  // Whether the judge and the zygote are both still running (reaps one that ended). A lane
  // whose judge or zygote died answers every later request with an error: start a new one.
  bool Alive();

  class Impl;  // defined in lane_impl.h, internal to execute

 private:
  explicit Lane(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kf::execute
