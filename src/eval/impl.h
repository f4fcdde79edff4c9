// Evaluator internals shared by eval.cc (the orchestration: Prepare, Execute, the public
// calls), build_stage.cc (the static and the run-time builds) and baselines.cc (the timed
// references). Internal to eval.
#pragma once

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "build/build.h"
#include "common/files.h"
#include "eval/eval.h"
#include "eval/parts.h"

namespace kf::eval {

using Clock = std::chrono::steady_clock;

// Line `line` (1-based) of `text`, "" past its end.
std::string LineOf(const std::string& text, int line);
// An infra_error's diagnostic for a failure of kforge's own, in `stage`.
Diagnostic InfraDiagnostic(const std::string& stage, const Status& s);
// A build the machine failed (a missing toolchain part): infra_error, with the fix that
// `kforge doctor` gives for the same part as the hint.
Diagnostic EnvironmentDiagnostic(const build::EnvironmentFault& f);

// The first TORCH_CHECK in the candidate's C++ or CUDA sources whose message streams more than
// one part (`TORCH_CHECK(ok, "n = ", n)`), on one line, and its line in the submitted text (0
// when unknown). On the GPU machine (2026-12-07, bench/probe_h200.sh) such a check that failed
// ended the process with SIGSEGV, built by g++ or nvcc alike; with one string literal it raised.
// The cause is that machine's compiler (CXX, a wrapper that links libstdc++ statically into each
// extension): any number formatted through an ostream there crashes (c10::str, ostringstream).
struct StreamedCheck {
  std::string text;
  int line = 0;
};
std::optional<StreamedCheck> FindStreamedCheck(const extract::Candidate& c);
// A crash by SIGSEGV of a candidate whose sources hold such a check: `d`'s hint names it too
// (the memory hint stays: either may be the cause).
void HintStreamedCheck(const extract::Candidate& c, Diagnostic* d);

// What the run-time load_inline requests of one run cost and found.
struct RuntimeBuilds {
  double ms = 0;
  int builds = 0, compiled = 0;
  // A run-time build the machine failed: whatever the candidate then did, infra_error.
  std::optional<build::EnvironmentFault> environment;
};

struct Baselines {
  std::optional<execute::Summary> eager;
  std::optional<execute::Summary> compiled;
  std::string compile_unavailable;
  std::string disturbed;  // why it was not stored (BaselineDisturbed), "" when it was
};

// One execution lane and what it has loaded. Used by one thread at a time.
struct LaneState {
  std::unique_ptr<LaneRunner> lane;
  std::map<std::string, execute::ProblemInfo> problems;  // by problem hash
  std::string device_key;                                // device name + torch version
  std::string device_name;
};

// The timing stage's facts of a timed run (timing_facts.cc): stop reason, spread, GPU delay,
// host time, hidden calls, the GPU's state, quantiles.
nlohmann::json TimingFacts(const execute::ExecResult& r);
// The baselines stage's facts of an interleaved measurement.
nlohmann::json BaselineFacts(const execute::BaselineResult& b);
// The verdict's eager and compile times from an interleaved measurement.
void UseBaselines(const execute::BaselineResult& b, Verdict* v);
// An ok verdict's speedups over the reference's times, and their 95% intervals from the
// samples of the run that counts (the candidate's and its interleaved reference's).
void SetSpeedups(const execute::ExecResult& counted, Verdict* v);
// The 95% interval of median(base) / median(cand) (execute::RatioInterval).
std::optional<SpeedupInterval> Ci(const std::vector<double>& base_ms,
                                         const std::vector<double>& cand_ms);

class Evaluator::Impl {
 public:
  EvalOptions opt;
  std::unique_ptr<SteadyClock> clock;  // never null
  std::unique_ptr<ArtifactBuilder> builder;
  std::vector<LaneState> lanes;
  std::unique_ptr<VerdictStore> store;
  std::shared_future<Result<build::Artifact>> native;
  // Baselines are timed once per problem and device kind, however many lanes ask at once.
  std::mutex baselines_mu;
  std::map<std::string, std::shared_ptr<std::mutex>> baseline_locks;

  Clock::time_point Now() { return clock->Now(); }
  double MsSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Now() - t0).count();
  }

  Status EnsureLane(LaneState& ls, Verdict* v);
  // The problem on this lane, loaded first if need be (untrusted: in a confined judge).
  Result<execute::ProblemInfo> Problem(LaneState& ls, const std::string& hash,
                                       const std::filesystem::path& path, bool trusted);
  // Lane `lane`, or lane 0 for an index out of range; null when this process has none.
  LaneState* PickLane(int lane);
  // Reads the problem file, readies the lane and loads the problem there; `hash` is the file's.
  Result<execute::ProblemInfo> LoadOnLane(LaneState& ls, const std::filesystem::path& path,
                                          bool trusted, std::string* hash);
  // The stored baselines, or measured now (again, up to twice, while BaselineDisturbed says
  // the measurement was disturbed) and stored only when undisturbed.
  Result<Baselines> GetBaselines(LaneState& ls, const std::string& hash,
                                 const execute::ProblemInfo& p);
  // Stores baselines measured beside a candidate (interleaved), when undisturbed: the record
  // later tools read; verdicts always use their own interleaved measurement.
  void RecordBaselines(LaneState& ls, const std::string& hash, const execute::BaselineResult& b);
  std::string BaselineKey(const LaneState& ls, const std::string& hash) const;
  // The reference's times beside the ok run `r`, into `v`: its interleaved batches (recorded as
  // the problem's baselines when undisturbed), else the stored or newly measured baselines.
  Status UseReferenceTimes(LaneState& ls, const execute::ExecResult& r,
                           const execute::ProblemInfo& problem, Verdict* v);
  // Runs an implausibly fast candidate again in a fresh process (fresh inputs and seeds), into
  // `p`'s verdict: a failed re-verification sets `*status`; a slower one's times count, and it
  // is returned as the run whose speedups count.
  std::optional<execute::ExecResult> Reverify(LaneState& ls, const execute::ProblemInfo& problem,
                                              const execute::LoadInlineFn& load_inline,
                                              execute::ExecOptions eo, Prepared& p,
                                              VerdictStatus* status);
  Prepared Prepare(const std::filesystem::path& problem_path, const std::string& text,
                   bool problem_trusted);
  // The build of every statically resolved load_inline call of `p`, in parallel, recorded in
  // its verdict; the final status when the build decided it (compile or infra error).
  std::optional<VerdictStatus> BuildStatic(Prepared& p);
  // Builds what the candidate asks load_inline for while it runs, as BuildStatic would, into
  // `rb` and `p`'s verdict (compile errors with the candidate's lines). `p` and `rb` must
  // outlive the function returned.
  execute::LoadInlineFn RuntimeLoadInline(Prepared& p, RuntimeBuilds* rb);
  Verdict Execute(Prepared p, LaneState& ls);
  // The store's key (VerdictKey) for this problem and candidate under this evaluator's
  // settings and environment; "" when the toolchain cannot be fingerprinted (nothing is then
  // stored or looked up).
  std::string StoreKey(const std::string& problem_hash, const std::string& candidate_hash);

  // The toolchain fingerprint and device model (fetched once); nothing when the toolchain
  // cannot be fingerprinted.
  std::optional<nlohmann::json> Environment();
  // The candidate's family on this evaluator's backend.
  const backend::Path& PathOf(const extract::Candidate& c) const;

  std::string settings_digest;  // SettingsDigest(opt), fixed at creation
  std::mutex env_mu;
  std::optional<nlohmann::json> environment;  // GUARDED_BY(env_mu): toolchain and device model
  Verdict Finish(Prepared& p, VerdictStatus s);
};

}  // namespace kf::eval
