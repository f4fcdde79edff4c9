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

// An infra_error verdict for a job no worker could finish (the delivery limit); `why` is the
// diagnostic's message.
JobResult InfraResult(const JobSpec& job, const std::string& why, const std::string& worker,
                      int deliveries);

// Writes the problem text to <cache>/problems/<hash16>/<problem_id>.py (content-addressed;
// written once, atomically) and returns the path, whose name gives eval::ProblemId back.
// problem_id must be a relative name of [A-Za-z0-9_.-/] without "..".
Result<std::filesystem::path> MaterializeProblem(const std::filesystem::path& cache_dir,
                                                 const std::string& problem_id,
                                                 const std::string& problem_hash,
                                                 const std::string& problem_text);
bool ValidProblemId(const std::string& id);

// Where a job stands, as the service reports it.
struct JobView {
  enum class State { kUnknown, kPending, kDone };
  State state = State::kUnknown;
  std::optional<JobResult> result;  // kDone only
};

// What /metrics shows about the engine.
struct EngineStats {
  std::map<std::string, long long> queue_depth;  // by queue ("build", "gpu")
  std::map<std::string, long long> workers;      // live workers by role
  std::map<std::string, long long> verdicts;     // by status, since the queue was created
  std::map<std::string, double> stage_ms_sum;    // by stage name
  std::map<std::string, long long> stage_count;
  long long in_flight = 0;
  long long capacity = 0;
};

// Adds one verdict's status and stage times to the stats.
void CountVerdict(const Verdict& v, EngineStats* s);

}  // namespace kf::queue
