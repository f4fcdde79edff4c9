#include "queue/redis_jobs.h"

#include <cstdlib>

#include "common/clock.h"

namespace kf::queue {
namespace {
using nlohmann::json;

// Stores the job and enqueues it only if it was not stored before: one round trip, atomic, so
// a server dying between the steps cannot leave a claimed job that never runs. ARGV[3] = "1"
// first removes an infra_error result and the old record (the job runs again).
// KEYS: job, build stream, results, entries. ARGV: job JSON, id, replace.
constexpr const char* kEnqueueScript = R"lua(
if ARGV[3] == '1' then
  redis.call('HDEL', KEYS[3], ARGV[2])
  redis.call('DEL', KEYS[1])
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  local entry = redis.call('XADD', KEYS[2], '*', 'id', ARGV[2])
  redis.call('HSET', KEYS[4], ARGV[2], 'build ' .. entry)
  return 1
end
return 0
)lua";

// A built job moves to the gpu stream. KEYS: gpu stream, build stream, entries.
// ARGV: build entry id, job id.
constexpr const char* kForwardScript = R"lua(
local entry = redis.call('XADD', KEYS[1], '*', 'id', ARGV[2])
redis.call('HSET', KEYS[3], ARGV[2], 'gpu ' .. entry)
redis.call('XACK', KEYS[2], 'build', ARGV[1])
redis.call('XDEL', KEYS[2], ARGV[1])
return 1
)lua";

// One job's state. Running: its current entry is in its group's pending list (a worker holds
// it). KEYS: results, job, entries, build stream, gpu stream. ARGV: id.
constexpr const char* kStateScript = R"lua(
local r = redis.call('HGET', KEYS[1], ARGV[1])
if r then return {'done', r} end
if redis.call('EXISTS', KEYS[2]) == 0 then return {'missing'} end
local e = redis.call('HGET', KEYS[3], ARGV[1])
if not e then return {'queued'} end
local sp = string.find(e, ' ', 1, true)
if not sp then return {'queued'} end
local role = string.sub(e, 1, sp - 1)
local entry = string.sub(e, sp + 1)
local stream = KEYS[4]
if role == 'gpu' then stream = KEYS[5] end
local p = redis.pcall('XPENDING', stream, role, entry, entry, 1)
if type(p) == 'table' and p.err == nil and #p > 0 then return {'running', p[1][2]} end
return {'queued'}
)lua";

// Many jobs: the result, 1 (in flight) or 0 (missing) each. KEYS: results, then the job key of
// each id. ARGV: the ids.
constexpr const char* kLookManyScript = R"lua(
local out = {}
for i = 1, #ARGV do
  local r = redis.call('HGET', KEYS[1], ARGV[i])
  if r then
    out[i] = r
  elseif redis.call('EXISTS', KEYS[i + 1]) == 1 then
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
)lua";

Status ErrorReply(const std::string& what, const Reply& r) {
  return Status::Internal("Redis " + what + ": " + r.str);
}

Result<std::optional<JobResult>> DecodeResult(const Reply& r) {
  if (r.type != Reply::Type::kString) return std::optional<JobResult>();
  json j = json::parse(r.str, nullptr, false);
  auto res = ResultFromJson(j);
  if (!res.ok()) return res.status();
  return std::optional<JobResult>(std::move(res.value()));
}

}  // namespace

const char* RoleName(Role r) { return r == Role::kBuild ? "build" : "gpu"; }

bool RoleFromName(const std::string& s, Role* r) {
  if (s == "build")
    *r = Role::kBuild;
  else if (s == "gpu")
    *r = Role::kGpu;
  else
    return false;
  return true;
}

std::vector<Delivery> ParseEntries(const Reply& entries) {
  std::vector<Delivery> out;
  if (entries.type != Reply::Type::kArray) return out;
  for (const auto& e : entries.elements) {
    // A pending entry deleted from the stream comes back as [id, nil]: nothing to run.
    if (e.type != Reply::Type::kArray || e.elements.size() < 2) continue;
    const Reply& fields = e.elements[1];
    if (fields.type != Reply::Type::kArray) continue;
    Delivery d;
    d.entry_id = e.elements[0].str;
    for (size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
      if (fields.elements[i].str == "id") d.job_id = fields.elements[i + 1].str;
    }
    if (!d.job_id.empty()) out.push_back(std::move(d));
  }
  return out;
}

long long ParseDeliveryCount(const Reply& pending) {
  if (pending.type != Reply::Type::kArray || pending.elements.empty()) return 0;
  const Reply& e = pending.elements[0];
  if (e.type != Reply::Type::kArray || e.elements.size() < 4) return 0;
  return e.elements[3].integer;
}

RedisJobs::RedisJobs(Redis* redis, std::string prefix)
    : redis_(redis), prefix_(std::move(prefix)) {}

Status RedisJobs::EnsureGroups() {
  for (Role r : {Role::kBuild, Role::kGpu}) {
    auto rep = redis_->Command({"XGROUP", "CREATE", StreamKey(r), RoleName(r), "0", "MKSTREAM"});
    if (!rep.ok()) return rep.status();
    if (rep->type == Reply::Type::kError && rep->str.rfind("BUSYGROUP", 0) != 0) {
      return ErrorReply("XGROUP CREATE", *rep);
    }
  }
  return Status::Ok();
}

Result<bool> RedisJobs::Enqueue(const JobSpec& job, bool replace_infra) {
  auto rep = redis_->Command({"EVAL", kEnqueueScript, "4", JobKey(job.id), StreamKey(Role::kBuild),
                              ResultsKey(), EntriesKey(), JobToJson(job).dump(), job.id,
                              replace_infra ? "1" : "0"});
  if (!rep.ok()) return rep.status();
  if (rep->type == Reply::Type::kError) return ErrorReply("enqueue", *rep);
  return rep->integer == 1;
}

Result<std::optional<JobResult>> RedisJobs::GetResult(const std::string& id) {
  auto rep = redis_->Command({"HGET", ResultsKey(), id});
  if (!rep.ok()) return rep.status();
  return DecodeResult(*rep);
}

Result<std::vector<std::optional<JobResult>>> RedisJobs::GetResults(
    const std::vector<std::string>& ids) {
  std::vector<std::optional<JobResult>> out;
  if (ids.empty()) return out;
  std::vector<std::string> cmd = {"HMGET", ResultsKey()};
  cmd.insert(cmd.end(), ids.begin(), ids.end());
  auto rep = redis_->Command(cmd);
  if (!rep.ok()) return rep.status();
  if (rep->type != Reply::Type::kArray) return ErrorReply("HMGET", *rep);
  for (const auto& e : rep->elements) {
    auto r = DecodeResult(e);
    out.push_back(r.ok() ? std::move(r.value()) : std::nullopt);
  }
  return out;
}

Result<Stored> ParseStored(const Reply& r) {
  if (r.type != Reply::Type::kArray || r.elements.empty()) {
    return Status::Internal("Redis job state: unexpected reply");
  }
  const std::string& kind = r.elements[0].str;
  Stored s;
  if (kind == "missing") return s;
  s.seen = Seen::kInFlight;
  if (kind == "queued") {
    s.view.state = JobView::State::kQueued;
  } else if (kind == "running") {
    s.view.state = JobView::State::kRunning;
  } else if (kind == "done" && r.elements.size() >= 2) {
    auto res = DecodeResult(r.elements[1]);
    if (!res.ok()) return res.status();
    s.seen = Seen::kDone;
    s.view.state = JobView::State::kDone;
    s.view.result = std::move(*res.value());
  } else {
    return Status::Internal("Redis job state: unexpected '" + kind + "'");
  }
  return s;
}

Result<Stored> RedisJobs::Look(const std::string& id) {
  auto rep = redis_->Command({"EVAL", kStateScript, "5", ResultsKey(), JobKey(id), EntriesKey(),
                              StreamKey(Role::kBuild), StreamKey(Role::kGpu), id});
  if (!rep.ok()) return rep.status();
  if (rep->type == Reply::Type::kError) return ErrorReply("job state", *rep);
  return ParseStored(*rep);
}

Result<std::vector<Stored>> RedisJobs::LookMany(const std::vector<std::string>& ids) {
  std::vector<Stored> out;
  if (ids.empty()) return out;
  std::vector<std::string> cmd = {"EVAL", kLookManyScript, std::to_string(ids.size() + 1),
                                  ResultsKey()};
  for (const auto& id : ids) cmd.push_back(JobKey(id));
  cmd.insert(cmd.end(), ids.begin(), ids.end());
  auto rep = redis_->Command(cmd);
  if (!rep.ok()) return rep.status();
  if (rep->type != Reply::Type::kArray || rep->elements.size() != ids.size()) {
    return ErrorReply("job states", *rep);
  }
  for (const auto& e : rep->elements) {
    Stored s;
    if (e.type == Reply::Type::kString) {
      auto res = DecodeResult(e);
      if (!res.ok()) return res.status();
      s.seen = Seen::kDone;
      s.view.state = JobView::State::kDone;
      s.view.result = std::move(*res.value());
    } else if (e.integer == 1) {
      s.seen = Seen::kInFlight;
      s.view.state = JobView::State::kQueued;
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::string> RedisJobs::Epoch() {
  auto rep = redis_->Command({"GET", EpochKey()});
  if (!rep.ok()) return rep.status();
  if (rep->type == Reply::Type::kError) return ErrorReply("GET epoch", *rep);
  return rep->str;
}

Result<std::string> RedisJobs::ClaimEpoch(const std::string& fresh) {
  auto reps = redis_->Pipeline({{"SET", EpochKey(), fresh, "NX"}, {"GET", EpochKey()}});
  if (!reps.ok()) return reps.status();
  if ((*reps)[1].type != Reply::Type::kString) return ErrorReply("epoch", (*reps)[1]);
  return (*reps)[1].str;
}

Result<EngineStats> RedisJobs::Stats(std::chrono::milliseconds worker_alive) {
  auto reps = redis_->Pipeline({{"XLEN", StreamKey(Role::kBuild)},
                                {"XLEN", StreamKey(Role::kGpu)},
                                {"HGETALL", StatsKey()},
                                {"HGETALL", WorkersKey()}});
  if (!reps.ok()) return reps.status();
  const auto& r = *reps;
  EngineStats s;
  s.queue_depth["build"] = r[0].integer;
  s.queue_depth["gpu"] = r[1].integer;
  s.in_flight = r[0].integer + r[1].integer;
  s.workers["build"] = 0;
  s.workers["gpu"] = 0;
  for (size_t i = 0; i + 1 < r[2].elements.size(); i += 2) {
    const std::string& k = r[2].elements[i].str;
    const std::string& v = r[2].elements[i + 1].str;
    if (k.rfind("verdicts:", 0) == 0) s.verdicts[k.substr(9)] = std::atoll(v.c_str());
    if (k.rfind("stage_ms:", 0) == 0) s.stage_ms_sum[k.substr(9)] = std::atof(v.c_str());
    if (k.rfind("stage_n:", 0) == 0) s.stage_count[k.substr(8)] = std::atoll(v.c_str());
  }
  long long now = NowMs();
  for (size_t i = 0; i + 1 < r[3].elements.size(); i += 2) {
    json w = json::parse(r[3].elements[i + 1].str, nullptr, false);
    if (!w.is_object()) continue;
    if (now - w.value("seen_ms", 0LL) <= worker_alive.count()) s.workers[w.value("role", "?")] += 1;
  }
  return s;
}

Result<long long> RedisJobs::InFlight() {
  auto reps =
      redis_->Pipeline({{"XLEN", StreamKey(Role::kBuild)}, {"XLEN", StreamKey(Role::kGpu)}});
  if (!reps.ok()) return reps.status();
  return (*reps)[0].integer + (*reps)[1].integer;
}

Result<std::optional<Delivery>> RedisJobs::Next(Role role, const std::string& consumer,
                                                std::chrono::milliseconds reclaim_idle,
                                                std::chrono::milliseconds block) {
  const std::string key = StreamKey(role);
  const std::string group = RoleName(role);
  auto claimed = redis_->Command({"XAUTOCLAIM", key, group, consumer,
                                  std::to_string(reclaim_idle.count()), "0-0", "COUNT", "1"});
  if (!claimed.ok()) return claimed.status();
  if (claimed->type == Reply::Type::kError) return ErrorReply("XAUTOCLAIM", *claimed);
  if (claimed->elements.size() >= 2) {
    auto entries = ParseEntries(claimed->elements[1]);
    if (!entries.empty()) {
      Delivery d = entries.front();
      d.reclaimed = true;
      auto p = redis_->Command({"XPENDING", key, group, d.entry_id, d.entry_id, "1"});
      if (!p.ok()) return p.status();
      d.deliveries = ParseDeliveryCount(*p);
      return std::optional<Delivery>(d);
    }
  }
  std::vector<std::string> read = {"XREADGROUP", "GROUP", group, consumer, "COUNT", "1"};
  if (block.count() > 0) {  // BLOCK 0 would wait for ever
    read.insert(read.end(), {"BLOCK", std::to_string(block.count())});
  }
  read.insert(read.end(), {"STREAMS", key, ">"});
  auto rep = redis_->Command(read);
  if (!rep.ok()) return rep.status();
  if (rep->type == Reply::Type::kError) return ErrorReply("XREADGROUP", *rep);
  if (rep->nil() || rep->elements.empty()) return std::optional<Delivery>();
  const Reply& stream = rep->elements[0];
  if (stream.elements.size() < 2) return std::optional<Delivery>();
  auto entries = ParseEntries(stream.elements[1]);
  if (entries.empty()) return std::optional<Delivery>();
  return std::optional<Delivery>(entries.front());
}

Result<std::optional<JobSpec>> RedisJobs::LoadJob(const std::string& id) {
  auto rep = redis_->Command({"GET", JobKey(id)});
  if (!rep.ok()) return rep.status();
  if (rep->type != Reply::Type::kString) return std::optional<JobSpec>();
  auto job = JobFromJson(json::parse(rep->str, nullptr, false));
  if (!job.ok()) return job.status();
  return std::optional<JobSpec>(std::move(job.value()));
}

Result<bool> RedisJobs::Publish(const std::string& id, const JobResult& r) {
  auto rep = redis_->Command({"HSETNX", ResultsKey(), id, ResultToJson(r).dump()});
  if (!rep.ok()) return rep.status();
  if (rep->type == Reply::Type::kError) return ErrorReply("HSETNX", *rep);
  if (rep->integer != 1) return false;
  std::vector<std::vector<std::string>> cmds = {
      {"HINCRBY", StatsKey(), std::string("verdicts:") + StatusName(r.verdict.status), "1"}};
  for (const auto& st : r.verdict.stages) {
    cmds.push_back({"HINCRBYFLOAT", StatsKey(), "stage_ms:" + st.name, std::to_string(st.ms)});
    cmds.push_back({"HINCRBY", StatsKey(), "stage_n:" + st.name, "1"});
  }
  auto reps = redis_->Pipeline(cmds);  // statistics only: a failure here loses no verdict
  (void)reps;
  return true;
}

Status RedisJobs::Ack(Role role, const std::string& entry_id, const std::string& job_id) {
  auto reps = redis_->Pipeline({{"XACK", StreamKey(role), RoleName(role), entry_id},
                                {"XDEL", StreamKey(role), entry_id},
                                {"HDEL", EntriesKey(), job_id}});
  return reps.ok() ? Status::Ok() : reps.status();
}

Status RedisJobs::Forward(const std::string& entry_id, const std::string& job_id) {
  auto rep = redis_->Command({"EVAL", kForwardScript, "3", StreamKey(Role::kGpu),
                              StreamKey(Role::kBuild), EntriesKey(), entry_id, job_id});
  if (!rep.ok()) return rep.status();
  if (rep->type == Reply::Type::kError) return ErrorReply("forward", *rep);
  return Status::Ok();
}

Status RedisJobs::Touch(Role role, const std::string& consumer, const std::string& entry_id) {
  auto rep = redis_->Command(
      {"XCLAIM", StreamKey(role), RoleName(role), consumer, "0", entry_id, "JUSTID"});
  return rep.ok() ? Status::Ok() : rep.status();
}

Status RedisJobs::Release(Role role, const std::string& consumer, const std::string& entry_id) {
  constexpr const char* kDays = "864000000";  // ten days of idleness, in ms
  auto rep = redis_->Command({"XCLAIM", StreamKey(role), RoleName(role), consumer, "0", entry_id,
                              "IDLE", kDays, "JUSTID"});
  if (!rep.ok()) return rep.status();
  if (rep->type == Reply::Type::kError) return ErrorReply("XCLAIM", *rep);
  return Status::Ok();
}

Status RedisJobs::NoteError(const std::string& id, const std::string& message) {
  auto rep = redis_->Command({"HSET", ErrorsKey(), id, message});
  return rep.ok() ? Status::Ok() : rep.status();
}

Result<std::string> RedisJobs::LastError(const std::string& id) {
  auto rep = redis_->Command({"HGET", ErrorsKey(), id});
  if (!rep.ok()) return rep.status();
  return rep->str;
}

Status RedisJobs::Heartbeat(const std::string& worker, Role role, long long jobs_done) {
  json w = {{"role", RoleName(role)}, {"seen_ms", NowMs()}, {"jobs", jobs_done}};
  auto rep = redis_->Command({"HSET", WorkersKey(), worker, w.dump()});
  return rep.ok() ? Status::Ok() : rep.status();
}

Status RedisJobs::Goodbye(const std::string& worker) {
  auto rep = redis_->Command({"HDEL", WorkersKey(), worker});
  return rep.ok() ? Status::Ok() : rep.status();
}

}  // namespace kf::queue
