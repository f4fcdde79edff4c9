// worker_plan: the decisions of `kforge worker` that need no Redis and no evaluator, so they are
// tested on their own (worker_plan_test.cc): which jobs it refuses before evaluating, what it
// does with each outcome of the pipeline, how many jobs it holds, and its pipeline's options.
// Internal to queue; worker.cc acts on them.
#pragma once

#include <optional>
#include <string>

#include "pipeline/pipeline.h"
#include "queue/job.h"
#include "queue/worker.h"

namespace kf::queue {

// What a worker does with a job it holds when the pipeline is done with it.
enum class Step {
  kPublish,  // write the verdict as the job's result, acknowledge the entry
  kForward,  // built (build role): onto the gpu stream
  // An infrastructure failure another worker may not have: note it, leave the entry pending
  // so another worker takes it after reclaim_idle; the delivery limit ends it.
  kLeavePending,
  // Not evaluated (the worker is stopping): hand the entry back for another worker now.
  kRelease,
};
Step StepAfter(const Verdict& v, pipeline::Outcome how);

// The infra_error verdict of a job the worker must not evaluate however often it is handed
// out: one for another backend, or queued under other evaluation settings than the worker's
// (its verdict would not be the one the service was asked for). Published at once.
std::optional<Verdict> Mismatch(const WorkerOptions& opt, const std::string& worker,
                                const JobSpec& job);

// The verdict of a job handed out more than opt.max_deliveries times (`deliveries` counts this
// one); `last_error` is the last attempt's infrastructure failure, "" if none was noted.
Verdict OverDeliveryLimit(const JobSpec& job, long long deliveries, const std::string& last_error,
                          const std::string& worker);

// How many jobs a worker holds at once (taken from its stream, not yet settled): opt.in_hand
// when set, else one per build thread for the build role and two per lane for the gpu role
// (each lane running one with the next prepared behind it).
int InHandLimit(const WorkerOptions& opt, int lanes);

// The pipeline a worker evaluates through: every held job fits its intake at once, stored
// verdicts are reused, and the build role's pipeline ends at the build stage.
pipeline::PipelineOptions WorkerPipelineOptions(const WorkerOptions& opt, int lanes);

}  // namespace kf::queue
