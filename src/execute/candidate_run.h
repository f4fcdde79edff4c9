// One candidate's run on a lane, a script of requests: spawn, load, the correctness trials
// (their plan: trial_plan.h), timing and the wall-clock bound (timed_run.cc; the H07/busy
// decision: JudgeWallClock), the ablation call. What replies mean is decided in replies.h; the
// process's lifecycle is CandidateProcess's. Internal to execute.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "execute/candidate_process.h"
#include "execute/jit_rules.h"
#include "execute/lane_impl.h"
#include "execute/replies.h"
#include "extract/guards.h"

namespace kf::execute {

double MsSince(std::chrono::steady_clock::time_point t0);

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
  void Stop() { proc_.Stop(); }

  // CandidateProcess::Ask, noting a failed load_inline build and the jit facts (Triton's
  // compiles and launches) for the verdict.
  Result<nlohmann::json> Ask(const nlohmann::json& msg, std::chrono::milliseconds timeout);

  // Handles a failed Ask or a refused request; returns false (the run is over).
  bool Failed(const std::string& stage, const std::string& what, const Result<nlohmann::json>& r,
              std::chrono::milliseconds timeout);

  // Ends the run with a failure: its outcome and diagnostic; the process is stopped unless the
  // failure is the infrastructure's.
  bool End(const Failure& f);

  // The judge's verdict on what the candidate wrote into a slot's output buffers.
  // `perturb`, for timed outputs: the seed and index of the timed call that wrote them.
  Result<nlohmann::json> CheckSlot(const std::string& slot,
                                   const nlohmann::json& perturb = nullptr);

  bool Infra(const std::string& message);

  bool Load(const ProblemInfo& problem, const std::string& code);

  // Between phases of a big problem (ReleaseBetweenPhases): the candidate host lets go of every
  // slot but those in `keep`, then the judge hands them back, so the next phase's buffers do
  // not sit beside them. A no-op for other problems. False when the run ended (`stage` names
  // where, for the verdict).
  bool ReleaseSlots(const std::vector<std::string>& keep, const std::string& stage);
  // The trials of PlanTrials (trial_plan.h), in the same buffers every time (a shape
  // variant's in its own).
  bool Trials(const ProblemInfo& problem);

  // Timing, the wall-clock bound and the timed outputs (timed_run.cc).
  bool Time();

  // The candidate's own kernels must do the work: with them made no-ops (the extension's tensor
  // results NaN; for Triton, the ghost replay: every launch skipped), the answer has to be
  // wrong (H02: a decoy kernel beside the real computation).
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
  CandidateProcess proc_;  // the candidate host
  const ExecOptions& opt_;
  const backend::Path& path_;  // the candidate's family on the lane's device
  ExecResult out_;
  std::string code_;
  JitStats jit_;  // what the host reported of compiles and launches in its process
  std::string problem_;
  MemoryFacts memory_;
  std::vector<extract::GuardBlock> guards_;  // watched by the host; empty: nothing to watch
};

}  // namespace kf::execute
