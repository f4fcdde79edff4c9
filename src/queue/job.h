// job: what the reward service evaluates, and what it answers. A job's id is eval::JobKey of
// its problem, candidate and evaluation settings, so the same problem and candidate are one job
// however often and from wherever they are submitted.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"
#include "score/verdict.h"

namespace kf::queue {

struct JobSpec {
  std::string id;            // eval::JobKey(problem_hash, candidate_hash, settings)
  std::string problem_id;    // "level1/relu", or "inline" for a problem sent as text
  std::string problem_hash;  // SHA-256 of problem_text
  std::string problem_text;  // travels with the job: workers need no access to the server's files
  std::string candidate;     // the candidate or raw model reply
  std::string backend;
  std::string settings;      // eval::SettingsDigest of the service's evaluation options
  // True only for a problem the operator registered (`serve --problems`): its text is imported
  // by the trusted judge. A problem sent as text (inline, or a label holding its source) runs
  // only in a confined judge of its own. Not part of the id: a text equal to a registered
  // problem is that problem.
  bool problem_trusted = false;
};

// Builds a job (hashes and id) from its parts.
JobSpec MakeJob(std::string problem_id, std::string problem_text, std::string candidate,
                std::string backend, std::string settings);

nlohmann::json JobToJson(const JobSpec& j);
Result<JobSpec> JobFromJson(const nlohmann::json& j);

// A finished job: the verdict and who produced it.
struct JobResult {
  Verdict verdict;
  std::string worker;  // consumer name of the worker that wrote it ("embedded" in-process)
  int deliveries = 1;  // how many times the job was handed to a worker
};

nlohmann::json ResultToJson(const JobResult& r);
Result<JobResult> ResultFromJson(const nlohmann::json& j);

// What a verdict says of its job, without the texts.
struct JobIdentity {
  std::string problem_id, problem_hash, candidate_hash, backend;
};
JobIdentity IdentityOf(const JobSpec& job);

// An infra_error verdict for a job no worker could finish (the delivery limit); `why` is the
// diagnostic's message.
JobResult InfraResult(const JobSpec& job, const std::string& why, const std::string& worker,
                      int deliveries);
JobResult InfraResult(const JobIdentity& job, const std::string& why, const std::string& worker,
                      int deliveries);

// Writes the problem text to <cache>/problems/<hash16>/<problem_id>.py (content-addressed;
// written once, atomically) and returns the path, whose name gives eval::ProblemId back.
// problem_id must be a relative name of [A-Za-z0-9_.-/] without "..".
Result<std::filesystem::path> MaterializeProblem(const std::filesystem::path& cache_dir,
                                                 const std::string& problem_id,
                                                 const std::string& problem_hash,
                                                 const std::string& problem_text);
bool ValidProblemId(const std::string& id);

// Where a job stands, as the service reports it: the same answer from every route and from
// both engines (docs/API.md, "Job states").
struct JobView {
  enum class State {
    kUnknown,  // never submitted here, or forgotten (404)
    kQueued,   // waiting for a build or a gpu worker (or lane)
    kRunning,  // a worker (or lane) has it
    kDone,     // a verdict is there: `result`
    kLost,     // submitted, then its record vanished with Redis's data and this service held
               // no copy to queue it again; `result` is an infra_error saying so (resubmit)
  };
  State state = State::kUnknown;
  std::optional<JobResult> result;  // kDone and kLost
};
// "queued", "running", "done", "lost" ("unknown" for kUnknown, which routes answer with 404).
const char* StateName(JobView::State s);
// Finished one way or the other: waiting longer changes nothing.
inline bool Settled(JobView::State s) {
  return s == JobView::State::kDone || s == JobView::State::kLost;
}

// What /metrics shows about the engine.
struct EngineStats {
  std::map<std::string, long long> queue_depth;  // by queue ("build", "gpu")
  std::map<std::string, long long> workers;      // live workers by role
  std::map<std::string, long long> verdicts;     // by status, since the queue was created
  std::map<std::string, double> stage_ms_sum;    // by stage name
  std::map<std::string, long long> stage_count;
  long long in_flight = 0;
  long long capacity = 0;
  // Redis mode, this server since it started: jobs whose record vanished from Redis, queued
  // again from the server's own copy, or answered lost (no copy); times Redis lost its data.
  long long requeued = 0;
  long long lost = 0;
  long long data_losses = 0;
};

// Adds one verdict's status and stage times to the stats.
void CountVerdict(const Verdict& v, EngineStats* s);

}  // namespace kf::queue
