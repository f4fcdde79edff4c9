#include "queue/worker_plan.h"

#include <algorithm>

namespace kf::queue {

Step StepAfter(const Verdict& v, pipeline::Outcome how) {
  if (how == pipeline::Outcome::kBuilt) return Step::kForward;
  if (pipeline::IsCancelled(v)) return Step::kRelease;
  if (v.status == VerdictStatus::kInfraError) return Step::kLeavePending;
  return Step::kPublish;
}

std::optional<Verdict> Mismatch(const WorkerOptions& opt, const std::string& worker,
                                const JobSpec& job) {
  if (!opt.backend.empty() && job.backend != opt.backend) {
    return InfraResult(job,
                       "the job is for the " + job.backend + " backend; worker " + worker +
                           " runs " + opt.backend,
                       worker, 1)
        .verdict;
  }
  if (!opt.settings.empty() && job.settings != opt.settings) {
    return InfraResult(job,
                       "the job was queued with other evaluation settings than worker " + worker +
                           " has (its flags: trials, tolerances, timing, policy... must match "
                           "kforge serve's)",
                       worker, 1)
        .verdict;
  }
  return std::nullopt;
}

Verdict OverDeliveryLimit(const JobSpec& job, long long deliveries, const std::string& last_error,
                          const std::string& worker) {
  std::string why = "the job was handed to workers " + std::to_string(deliveries - 1) +
                    " times without a verdict (each worker died, hung or failed)";
  if (!last_error.empty()) why += "; last error: " + last_error;
  return InfraResult(job, why, worker, static_cast<int>(deliveries)).verdict;
}

int InHandLimit(const WorkerOptions& opt, int lanes) {
  if (opt.in_hand > 0) return opt.in_hand;
  if (opt.role == Role::kBuild) return std::max(1, opt.build_threads);
  return 2 * std::max(1, lanes);
}

pipeline::PipelineOptions WorkerPipelineOptions(const WorkerOptions& opt, int lanes) {
  pipeline::PipelineOptions po;
  po.build_threads = std::max(1, opt.build_threads);
  // Every held job is accepted at once: the worker's bound is how many it takes from Redis.
  po.queue_capacity = static_cast<size_t>(InHandLimit(opt, lanes));
  po.reuse_stored = true;  // a verdict made before by any process sharing the cache
  po.build_only = opt.role == Role::kBuild;
  return po;
}

}  // namespace kf::queue
