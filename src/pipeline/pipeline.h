// pipeline: many candidates through the Evaluator's stages at once, in process.
//
//   Submit ─► [intake queue] ─► build stage (N threads: Lookup, else Prepare)
//                                   │ final verdicts (format/cheat/compile) are scored here
//                                   ▼
//                             [ready queue] ─► one executor thread per lane (Execute)
//                                                    │ timing spoiled by load: once more when
//                                                    ▼ no build runs (PipelineOptions)
//                                               [retry queue]
//
// Both queues are bounded: a full intake queue blocks Submit (or fails TrySubmit), and a full
// ready queue blocks the build threads, so builds run at most `queue_capacity` candidates ahead
// of the lanes while still overlapping their execution. A build-only pipeline (build_only) ends
// at the build stage. Identical jobs (same problem file and candidate text) that are in flight
// together are evaluated once; each caller gets the verdict. With `reuse_stored`, a verdict
// already in the store is returned without any work.
//
// The one engine of kforge: `bench`, the reward service's embedded engine
// (src/queue/local_engine.cc), the Redis workers (src/queue/worker.cc), `generate` and `mcp`
// all evaluate through it, none needing to know about threads. Lane work that is not a candidate
// (describing a problem for a prompt) goes through it too (Describe), so a lane never serves two
// callers at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eval/eval.h"
#include "score/verdict.h"

namespace kf::pipeline {

struct Job {
  std::filesystem::path problem;
  std::string text;  // the candidate: Python source or a raw model reply
  // False: the problem's text came with a request; it runs only in a confined judge
  // (eval::Prepared::problem_trusted). Not part of the job's identity.
  bool problem_trusted = true;
};

// Where an accepted job is: a build thread took it, it is built and waits for a lane, or a
// lane runs it. `so_far` is the verdict so far (its stages): empty while building.
enum class JobStage { kBuilding, kBuilt, kExecuting };
using StageFn = std::function<void(JobStage, const Verdict& so_far)>;

// The diagnostic code of a verdict a job got because the pipeline was cancelled before it ran.
inline constexpr const char* kCancelledCode = "cancelled";
inline bool IsCancelled(const Verdict& v) {
  return v.status == VerdictStatus::kInfraError && !v.diagnostics.empty() &&
         v.diagnostics[0].code == kCancelledCode;
}

// How an accepted job ended.
enum class Outcome {
  kEvaluated,  // its verdict was made now (or the run was cancelled first: kCancelledCode)
  kFromStore,  // a verdict stored before (PipelineOptions::reuse_stored)
  kBuilt,      // a build-only pipeline built it: the verdict so far, for lanes elsewhere
};

// Called exactly once per accepted job, on a pipeline thread (never under a pipeline lock, so
// it may take its own locks; it must not call Close or destroy the Pipeline).
using DoneFn = std::function<void(const Verdict&, Outcome)>;

struct PipelineOptions {
  // Threads of the build stage. Builder already caps concurrent compiles, so extra threads
  // only wait there; one per core keeps extract/static checks of the next jobs going.
  int build_threads = 2;
  // Bound of the intake queue, and of the ready queue between the stages. Small enough to
  // give backpressure, large enough that the lanes never wait while builds are done.
  size_t queue_capacity = 64;
  // The intake's own bound when not 0: a service accepts all its admitted jobs at once (its
  // own admission control answers 503) while builds still run only queue_capacity ahead.
  size_t intake_capacity = 0;
  // Return stored verdicts (Evaluator::Lookup) instead of evaluating again.
  bool reuse_stored = true;
  // One job at a time, build then execute, on a single thread: the reference against which
  // the pipelined mode is measured (bench/throughput.sh), and a debugging aid.
  bool sequential = false;
  // A lane with nothing to run prepares the problems of jobs being built (Stages::Warm: loads
  // the reference, times the baselines), work the first candidate of each problem would
  // otherwise do on the lane after its build. Keeps lanes busy while the first builds run.
  bool warm_lanes = true;
  // A verdict whose timing load on the machine spoiled (infra_error with the diagnostic
  // execute::kBusyCode: the compilers kept the candidate's host from a CPU) is not delivered
  // but evaluated once more on a lane (the artifact is cached) as soon as no build is running,
  // or after `retry_after` at the latest. Its second verdict is delivered, whatever it is. So
  // is a verdict whose lane died under it (infra_error with execute::kLaneDiedCode: its judge
  // or zygote was killed), at once: the lane starts anew for it.
  bool retry_busy = true;
  std::chrono::milliseconds retry_after{30000};
  // No lanes: the build stage is the last (`kforge worker --role build`, whose Evaluator has
  // none; its lanes are the gpu workers behind the Redis gpu stream). A job that Prepare leaves
  // ready for a lane is done there, Outcome::kBuilt with the verdict so far; final verdicts
  // (format, cheat, compile errors) are scored and stored as always. No executor thread runs,
  // nothing is warmed, and Describe is unavailable.
  bool build_only = false;
};

// The three Evaluator calls the pipeline needs, so tests can run it on a fake.
class Stages {
 public:
  virtual ~Stages() = default;
  virtual int lanes() const = 0;
  virtual std::optional<Verdict> Lookup(const std::filesystem::path& problem,
                                        const std::string& text) = 0;
  virtual eval::Prepared Prepare(const Job& job) = 0;
  virtual Verdict Execute(eval::Prepared p, int lane) = 0;
  // Optional per-problem preparation on a lane; failures are left for Execute to report.
  virtual void Warm(const Job& job, int lane) { (void)job, (void)lane; }
  // What the judge measured for a problem, on a lane (Pipeline::Describe).
  virtual Result<eval::Evaluator::ProblemFacts> Describe(const std::filesystem::path& problem,
                                                         int lane) {
    (void)problem, (void)lane;
    return Status::Unavailable("these stages describe no problem");
  }
};

// The real stages: forwards to an Evaluator that the caller keeps alive, or that they own.
std::unique_ptr<Stages> EvaluatorStages(eval::Evaluator* ev);
std::unique_ptr<Stages> EvaluatorStages(std::unique_ptr<eval::Evaluator> ev);

struct Stats {
  size_t intake_depth = 0;                  // jobs waiting for the build stage
  size_t ready_depth = 0;                   // built jobs waiting for a lane
  size_t in_flight = 0;                     // accepted distinct jobs not yet done
  size_t building = 0;                      // of those, in a build thread's Prepare now
  size_t executing = 0;                     // of those, on a lane now
  size_t warming = 0;                       // lanes preparing a problem ahead (warm-ups) now
  size_t submitted = 0;                     // accepted calls (a deduplicated call counts here)
  size_t deduplicated = 0;                  // calls that joined an identical job already in flight
  size_t done = 0;                          // distinct jobs finished (from_store included)
  size_t from_store = 0;                    // of those, answered by a stored verdict
  size_t evaluated = 0;                     // of those, evaluated now (Prepare ran)
  size_t built = 0;                         // of those, built only (build_only; not in by_status)
  std::map<std::string, size_t> by_status;  // done jobs by VerdictStatus name
  size_t warmed = 0;                        // problems prepared ahead on idle lanes
  size_t retried = 0;                       // jobs evaluated again (a busy machine, a dead lane)
  std::vector<double> lane_busy_ms;         // time inside Execute and Warm, per lane
  double warm_ms = 0;                       // of that, inside Warm (problems prepared ahead)
  double build_busy_ms = 0;                 // time inside Prepare, all build threads summed
  double wall_ms = 0;                       // since the Pipeline was constructed
};

class Pipeline {
 public:
  // `ev` (or `stages`) must outlive the Pipeline. Threads start here.
  Pipeline(eval::Evaluator* ev, PipelineOptions opt);
  Pipeline(std::unique_ptr<Stages> stages, PipelineOptions opt);
  ~Pipeline();  // Close(): drains every accepted job, then joins the threads
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Accepts a job; blocks while the intake queue is full. False after Close. `on_stage`, when
  // set, is told where the job is as it moves (on a pipeline thread, no pipeline lock held).
  bool Submit(Job job, DoneFn done, StageFn on_stage = {});
  // Never blocks: false when the intake queue is full or after Close. A job identical to one
  // in flight is always accepted (it adds no work).
  bool TrySubmit(Job job, DoneFn done, StageFn on_stage = {});
  // Submit, then wait for the verdict (infra_error if the pipeline is closed).
  Verdict Evaluate(Job job, StageFn on_stage = {});
  // The facts of a problem for a prompt (Evaluator::Describe), on the first lane that is free:
  // lane work is never concurrent with a candidate's. Not in sequential or build-only mode
  // (kUnavailable).
  Result<eval::Evaluator::ProblemFacts> Describe(const std::filesystem::path& problem);
  // No more jobs; returns when every accepted job is done. Idempotent, thread-safe.
  void Close();
  // Stops early (a time limit, ^C): refuses new jobs as Close does, and every accepted job not
  // yet running (waiting for a build thread, for a lane or for its retry) is done at once with
  // an infra_error verdict (diagnostic code kCancelledCode; never stored, so a rerun evaluates
  // it). Running builds and executions finish. Returns at once; Close then waits for those.
  void Cancel();
  Stats stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// How a command starts the engine: an Evaluator made from `opt` (lanes started, store opened),
// owned by a new Pipeline.
Result<std::unique_ptr<Pipeline>> MakePipeline(const eval::EvalOptions& opt, PipelineOptions po);

// The options of a command that evaluates what it is given, in that order (`eval`,
// `feasibility`): one build thread, so builds follow the order of the candidates (a later one
// finds an earlier one's extension in the cache) while earlier ones run; no stored verdicts;
// no warming of problems ahead.
PipelineOptions InOrder();

}  // namespace kf::pipeline
