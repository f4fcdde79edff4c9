// One candidate's run on a lane (run.cc: the process's lifecycle, loading, the correctness
// trials, the ablation call; timed_run.cc: timing and the wall-clock bound). Internal to
// execute.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "execute/jit_rules.h"
#include "execute/lane_impl.h"
#include "extract/guards.h"

namespace kf::execute {

double MsSince(std::chrono::steady_clock::time_point t0);
Diagnostic Diag(const std::string& stage, const std::string& code, const std::string& message,
                int line = 0, const std::string& hint = "");
// The last `File "candidate.py", line N` in a traceback or faulthandler dump.
int LastCandidateLine(const std::string& text);
std::string FormatNumber(double v);
// One output's mismatch, as the judge described it, in a sentence.
std::string DescribeMismatch(const nlohmann::json& o);
// One correctness trial for the verdict, from the judge's check reply: the largest errors over
// the outputs and, for a wrong answer, where its first wrong output first differs.
nlohmann::json TrialRecord(const std::string& label, const nlohmann::json& check);
// "batch_size=300, dim=20000": a shape variant's sizes.
std::string VariantSizes(const nlohmann::json& variant);

class CandidateRun {
 public:
  CandidateRun(Lane::Impl& lane, const LoadInlineFn& load_inline, const ExecOptions& opt);

  ~CandidateRun() { Stop(); }

  ExecResult Run(const std::string& problem_id, const ProblemInfo& problem,
                 const std::string& code);

 private:
  // Run's stages; false when the run ended early (out_ says how).
  bool Stages(const ProblemInfo& problem);

  bool Spawn();

  // Kills the candidate if it is alive, reaps it and removes its private folder.
  void Stop();

  // Collects how a candidate that closed its channel ended: "signal 11 (Segmentation fault)".
  std::string Reap();

  // Sends a request and serves the candidate's load_inline events until the answer comes.
  // Deadlines exclude time spent building for it.
  Result<nlohmann::json> Ask(const nlohmann::json& msg, std::chrono::milliseconds timeout);

  // Handles a failed Ask or a refused request; returns false (the run is over).
  bool Failed(const std::string& stage, const std::string& what, const Result<nlohmann::json>& r,
              std::chrono::milliseconds timeout);

  bool Refused(const std::string& stage, const std::string& what, const nlohmann::json& r);

  // A trial on another size the problem allows went wrong (H19).
  static Diagnostic ShapeDiag(const nlohmann::json& variant, const std::string& detail);

  // The judge's verdict on what the candidate wrote into a slot's output buffers.
  // `perturb`, for timed outputs: the seed and index of the timed call that wrote them.
  Result<nlohmann::json> CheckSlot(const std::string& slot,
                                   const nlohmann::json& perturb = nullptr);

  bool Infra(const std::string& message);

  bool Load(const ProblemInfo& problem, const std::string& code);

  // The trials of PlanTrials (trial_plan.h), in the same buffers every time.
  bool Trials(const ProblemInfo& problem);

  // Timing, the wall-clock bound and the timed outputs (timed_run.cc).
  bool Time();

  // The extension must do the work: with its tensor results replaced by NaN, the answer has to
  // be wrong (H02: a decoy kernel beside the real computation).
  bool Ablate();

  // H03: true (and the verdict is cheat) when the call's reply shows that an except branch,
  // or a finally block after an exception, of the candidate ran during the call.
  bool FellBack(const nlohmann::json& reply, const std::string& during);

  bool Cheat(const std::string& rule, const std::string& message);

 public:
  uint64_t seed_ = 0;
  uint64_t init_seed_ = 0;

 private:
  Lane::Impl& lane_;
  const LoadInlineFn& load_inline_;
  const ExecOptions& opt_;
  const backend::Path& path_;  // the candidate's family on the lane's device
  ExecResult out_;
  std::string code_;
  JitStats jit_;  // what the host reported of compiles and launches in its process
  std::string problem_;
  MemoryFacts memory_;
  std::vector<extract::GuardBlock> guards_;  // watched by the host; empty: nothing to watch
  ZygoteChild proc_;                         // the candidate host
  Channel chan_;                             // its channel (moved out of proc_)
};

}  // namespace kf::execute
