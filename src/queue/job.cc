#include "queue/job.h"

#include <unistd.h>

#include <fstream>

#include "common/hash.h"
#include "eval/eval.h"

namespace kf::queue {
namespace fs = std::filesystem;
using nlohmann::json;

JobSpec MakeJob(std::string problem_id, std::string problem_text, std::string candidate,
                std::string backend, std::string settings) {
  JobSpec j;
  j.problem_id = std::move(problem_id);
  j.problem_hash = Sha256Hex(problem_text);
  j.problem_text = std::move(problem_text);
  j.candidate = std::move(candidate);
  j.backend = std::move(backend);
  j.settings = std::move(settings);
  j.id = eval::JobKey(j.problem_hash, Sha256Hex(j.candidate), j.settings);
  return j;
}

json JobToJson(const JobSpec& j) {
  return {{"id", j.id},
          {"problem_id", j.problem_id},
          {"problem_hash", j.problem_hash},
          {"problem_text", j.problem_text},
          {"candidate", j.candidate},
          {"backend", j.backend},
          {"settings", j.settings},
          {"problem_trusted", j.problem_trusted}};
}

Result<JobSpec> JobFromJson(const json& j) {
  if (!j.is_object()) return Status::Invalid("job: not a JSON object");
  JobSpec s;
  for (auto [key, field] : {std::pair{"id", &s.id},
                            {"problem_id", &s.problem_id},
                            {"problem_hash", &s.problem_hash},
                            {"problem_text", &s.problem_text},
                            {"candidate", &s.candidate},
                            {"backend", &s.backend},
                            {"settings", &s.settings}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) {
      return Status::Invalid(std::string("job: missing string field '") + key + "'");
    }
    *field = it->get<std::string>();
  }
  // Absent (a job queued by an older kforge): untrusted, the safe reading.
  s.problem_trusted = j.value("problem_trusted", false);
  // The id is derived, never trusted: a job whose parts do not hash to it is refused.
  if (MakeJob(s.problem_id, s.problem_text, s.candidate, s.backend, s.settings).id != s.id) {
    return Status::Invalid("job: id does not match its problem, candidate and settings");
  }
  return s;
}

json ResultToJson(const JobResult& r) {
  return {{"verdict", ToJson(r.verdict)}, {"worker", r.worker}, {"deliveries", r.deliveries}};
}

Result<JobResult> ResultFromJson(const json& j) {
  if (!j.is_object() || !j.contains("verdict")) return Status::Invalid("result: no verdict");
  JobResult r;
  std::string err;
  if (!VerdictFromJson(j["verdict"], &r.verdict, &err)) return Status::Invalid("result: " + err);
  r.worker = j.value("worker", "");
  r.deliveries = j.value("deliveries", 1);
  return r;
}

JobIdentity IdentityOf(const JobSpec& job) {
  return {job.problem_id, job.problem_hash, Sha256Hex(job.candidate), job.backend};
}

JobResult InfraResult(const JobSpec& job, const std::string& why, const std::string& worker,
                      int deliveries) {
  return InfraResult(IdentityOf(job), why, worker, deliveries);
}

JobResult InfraResult(const JobIdentity& job, const std::string& why, const std::string& worker,
                      int deliveries) {
  JobResult r;
  Verdict& v = r.verdict;
  v.problem_id = job.problem_id;
  v.problem_hash = job.problem_hash;
  v.candidate_hash = job.candidate_hash;
  v.backend = job.backend;
  v.status = VerdictStatus::kInfraError;
  Diagnostic d;
  d.stage = "queue";
  d.code = "infra";
  d.message = why;
  v.diagnostics.push_back(d);
  v.feedback = "kforge could not evaluate this candidate: " + why;
  r.worker = worker;
  r.deliveries = deliveries;
  return r;
}

bool ValidProblemId(const std::string& id) {
  if (id.empty() || id.size() > 200 || id.front() == '/' || id.find("..") != std::string::npos) {
    return false;
  }
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

Result<fs::path> MaterializeProblem(const fs::path& cache_dir, const std::string& problem_id,
                                    const std::string& problem_hash,
                                    const std::string& problem_text) {
  if (!ValidProblemId(problem_id)) return Status::Invalid("bad problem id '" + problem_id + "'");
  if (problem_hash.size() < 16) return Status::Invalid("bad problem hash");
  fs::path path = cache_dir / "problems" / problem_hash.substr(0, 16) / (problem_id + ".py");
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    return Status::IoError("cannot create " + path.parent_path().string() + ": " + ec.message());
  // Written beside and renamed: a reader on another process never sees half a file.
  fs::path tmp = path;
  tmp += ".tmp" + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    f << problem_text;
    if (!f) return Status::IoError("cannot write " + tmp.string());
  }
  fs::rename(tmp, path, ec);
  if (ec) return Status::IoError("cannot write " + path.string() + ": " + ec.message());
  return path;
}

const char* StateName(JobView::State s) {
  switch (s) {
    case JobView::State::kQueued:
      return "queued";
    case JobView::State::kRunning:
      return "running";
    case JobView::State::kDone:
      return "done";
    case JobView::State::kLost:
      return "lost";
    case JobView::State::kUnknown:
      break;
  }
  return "unknown";
}

void CountVerdict(const Verdict& v, EngineStats* s) {
  s->verdicts[StatusName(v.status)] += 1;
  for (const auto& st : v.stages) {
    s->stage_ms_sum[st.name] += st.ms;
    s->stage_count[st.name] += 1;
  }
}

}  // namespace kf::queue
