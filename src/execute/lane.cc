#include <unistd.h>

#include <algorithm>
#include <random>

#include "common/affinity.h"
#include "execute/host_times.h"
#include "execute/lane_impl.h"
#include "execute/requests.h"

namespace kf::execute {
namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::vector<std::string> PoolNames(int pool) {
  std::vector<std::string> names;
  for (int i = 0; i < pool; ++i) names.push_back("T" + std::to_string(i));
  return names;
}

uint64_t DrawSeed() {
  std::random_device rd;
  uint64_t s = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return (s & ((uint64_t{1} << 62) - 1)) | 1;  // positive and JSON-safe
}

void ReadBatchReply(const nlohmann::json& r, BatchReply* reply) {
  reply->device_ms = r.value("device_ms", std::vector<double>{});
  reply->host_ms = r.value("host_ms", std::vector<double>{});
  reply->hidden = r.value("hidden", 0);
}

Result<TimingResult> DriveTiming(const TimingOptions& opt, const BatchFn& batch) {
  TimingResult r;
  r.delay_us = ChooseDelayUs({});
  if (opt.warmup_iters > 0) {
    BatchReply warm;
    if (auto s = batch({0, opt.warmup_iters, 0}, &warm); !s.ok()) return s;
    r.delay_us = WarmupDelayUs(warm.host_ms);
  }
  StoppingRule rule(opt);
  std::vector<double> host_ms;
  auto t0 = std::chrono::steady_clock::now();
  while (int k = rule.Next(r.samples_ms)) {
    BatchReply got;
    if (auto s = batch({static_cast<int>(r.samples_ms.size()) + opt.warmup_iters, k, r.delay_us},
                       &got);
        !s.ok()) {
      return s;
    }
    if (static_cast<int>(got.device_ms.size()) != k) {
      return Status::Internal("asked for " + std::to_string(k) + " timed calls, got " +
                              std::to_string(got.device_ms.size()));
    }
    r.samples_ms.insert(r.samples_ms.end(), got.device_ms.begin(), got.device_ms.end());
    host_ms.insert(host_ms.end(), got.host_ms.begin(), got.host_ms.end());
    r.hidden += got.hidden;
  }
  r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.stop_reason = rule.reason();
  r.summary = Summarize(r.samples_ms);
  r.host_ms = host_ms.empty() ? 0 : Summarize(host_ms).median_ms;
  return r;
}

Lane::Lane(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Lane::~Lane() {
  if (!impl_) return;
  impl_->StopSpare();
  impl_->StopConfined();
  for (RunnerProc* p : {&impl_->judge, &impl_->zygote}) {
    if (p->chan.valid()) (void)p->chan.Send(requests::Bare("exit"));
    p->chan.Close();
    if (!p->child.Wait(milliseconds(3000))) p->child.Kill();
  }
  // A judge that exits removes its buffers; one that died (out of memory, killed) left them.
  RemoveSharedBuffers(impl_->judge_shm);
}

Result<std::unique_ptr<Lane>> Lane::Start(const LaneOptions& opt) {
  auto impl = std::make_unique<Impl>();
  impl->opt = opt;
  std::error_code ec;
  fs::create_directories(opt.work_dir, ec);
  if (ec) return Status::IoError("cannot create " + opt.work_dir.string() + ": " + ec.message());
  std::string tag = std::to_string(getpid());
  auto judge = StartRunner("judge", opt.python, opt.runner_dir, "judge",
                           opt.work_dir / ("judge-" + tag + ".log"));
  if (!judge.ok()) return judge.status();
  impl->judge = std::move(judge.value());
  auto zygote = StartRunner("zygote", opt.python, opt.runner_dir, "zygote",
                            opt.work_dir / ("zygote-" + tag + ".log"));
  if (!zygote.ok()) return zygote.status();
  impl->zygote = std::move(zygote.value());
  // The candidates the zygote forks inherit its cores.
  for (RunnerProc* p : {&impl->judge, &impl->zygote}) (void)PinProcess(p->child.pid(), opt.cpus);
  return std::unique_ptr<Lane>(new Lane(std::move(impl)));
}

bool Lane::Alive() { return impl_->judge.child.running() && impl_->zygote.child.running(); }

Result<DeviceInfo> Lane::Ready(const fs::path& native_so, const std::string& module) {
  Impl& m = *impl_;
  if (m.ready) return m.device;
  auto hello = m.judge.Request(requests::Hello(m.DeviceName()), m.opt.start_timeout);
  if (!hello.ok()) return hello.status();
  m.device.device = m.DeviceName();
  m.device.name = hello->value("device_name", "");
  m.device.torch_version = hello->value("torch", "");
  m.device.compile_available = hello->value("compile_available", false);
  m.device.raw = *hello;
  m.judge_shm = hello->value("shm_dir", "");
  nlohmann::json native = requests::Native(native_so, module);
  if (auto r = m.judge.Request(native, milliseconds(60000)); !r.ok()) return r.status();
  m.native_msg = native;
  if (auto r = m.zygote.Request(native, m.opt.start_timeout); !r.ok()) return r.status();
  m.ready = true;
  return m.device;
}

Result<ProblemInfo> Lane::LoadProblem(const std::string& id, const fs::path& path,
                                      uint64_t init_seed, bool trusted) {
  nlohmann::json msg = requests::LoadProblem(id, path, init_seed);
  Result<nlohmann::json> r = Status::Internal("not loaded");
  if (trusted) {
    impl_->untrusted.erase(id);
    r = impl_->JudgeRequest(id, msg, milliseconds(300000));
  } else {
    impl_->untrusted[id] = msg;
    r = impl_->StartConfined(id);
  }
  if (!r.ok()) return r.status();
  ProblemInfo p;
  p.id = id;
  p.init_seed = init_seed;
  p.init_inputs = (*r)["init_inputs"];
  p.inputs = (*r)["inputs"];
  p.outputs = (*r)["outputs"];
  if (r->contains("shape_variants")) p.shape_variants = (*r)["shape_variants"];
  if (r->contains("stateful")) p.stateful = (*r)["stateful"].get<std::vector<std::string>>();
  p.memory = MemoryFactsFromJson(r->value("memory", nlohmann::json::object()));
  return p;
}

Status Lane::Impl::ReleaseSlots(const std::string& problem, const std::vector<std::string>& keep) {
  auto r = JudgeRequest(problem, requests::ReleaseSlots(problem, keep), milliseconds(60000));
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::vector<nlohmann::json>> Lane::Impl::PreparePool(const std::string& problem, int pool,
                                                            uint64_t seed) {
  std::vector<nlohmann::json> descs;
  std::mt19937_64 rng(seed);
  for (const auto& name : PoolNames(pool)) {
    auto r = JudgeRequest(problem, requests::Prepare(problem, name, rng() >> 2),
                          milliseconds(300000));
    if (!r.ok()) return r.status();
    descs.push_back((*r)["slot"]);
  }
  return descs;
}

fs::path Lane::Impl::NextHostFolder() {
  return opt.work_dir / ("cand-" + std::to_string(getpid()) + "-" + std::to_string(++spawned));
}

void Lane::Impl::StopSpare() {
  if (!spare) return;
  StopZygoteChild(zygote, &spare->proc);
  spare.reset();
}

Result<ZygoteChild> Lane::Impl::TakeHost(const std::string& device, const fs::path& jit_cache,
                                         bool* prestarted) {
  *prestarted = false;
  std::optional<ZygoteChild> host;
  if (spare && spare->device == device && spare->jit_cache == jit_cache) {
    // One whose start failed, or that something killed, gets no candidate: its end would be
    // read as the candidate's crash.
    auto r = zygote.Request(requests::Reap(spare->proc.pid, 0), milliseconds(10000));
    if (r.ok() && r->value("running", false)) {
      host = std::move(spare->proc);
      spare.reset();
      *prestarted = true;
    } else if (r.ok() && !r->contains("running")) {
      spare->proc.pid = -1;  // reaped just now: only its folder is left to remove
    }
  }
  StopSpare();  // another device's or jit cache's, or one that ended
  if (!host) {
    auto fresh = SpawnFromZygote(zygote, "spawn", device, NextHostFolder(), jit_cache);
    if (!fresh.ok()) return fresh.status();
    host = std::move(fresh.value());
  }
  if (opt.prestart_host) {
    // A spare that cannot be forked is no fault of this run: the next one forks its own host.
    auto next = SpawnFromZygote(zygote, "spawn", device, NextHostFolder(), jit_cache);
    if (next.ok()) spare = Spare{std::move(next.value()), device, jit_cache};
  }
  return std::move(*host);
}

int Lane::Impl::JudgePid(const std::string& problem) const {
  if (untrusted.count(problem) == 0) return judge.child.pid();
  if (confined && confined->problem == problem) return HostOf(confined->proc.pid);
  return -1;
}

Result<EmptyCall> Lane::Impl::NoopCost(const std::string& problem, int pool,
                                       uint64_t perturb_seed, double delay_us, bool fresh) {
  const auto key = std::make_pair(problem, delay_us);
  auto it = noop_per_call.find(key);
  if (it != noop_per_call.end() && !fresh) return it->second;
  const int iters = 20;
  // On the CPU the empty call returns outputs like the reference's, and only what it costs
  // outside its timed part counts: an honest candidate's outputs are released outside its
  // timer too (16 MB given back to the system took 1-3 ms a call on a loaded 2-core machine,
  // which an empty call without outputs left in the gap: a false H07).
  const bool outputs = opt.backend == "cpu";
  // The judge's CPU over the request, for the CPU bound (JudgeWallClock): the candidate host's
  // CPU per call counts the same flush and input rewrite before each of its calls. Read only
  // where the judge that answers is already running (a confined judge forked by this request
  // was not).
  const int pid = JudgePid(problem);
  const HostTimes h0 = pid > 0 ? ReadHostTimes(pid) : HostTimes{};
  auto t0 = std::chrono::steady_clock::now();
  auto r = JudgeRequest(
      problem, requests::TimeNoop(problem, PoolNames(pool), iters, perturb_seed, delay_us, outputs),
      milliseconds(120000));
  if (!r.ok()) return r.status();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const HostTimes cpu = pid > 0 && pid == JudgePid(problem) ? ReadHostTimes(pid) - h0 : HostTimes{};
  double cpu_ms = cpu.process_cpu_ms;
  if (outputs) {
    BatchReply reply;
    ReadBatchReply(*r, &reply);
    for (double v : reply.device_ms) {
      ms -= v;
      cpu_ms -= v;  // the outputs written inside the timer: the candidate's reported time
    }
  }
  EmptyCall empty{ms / iters, cpu.ok ? std::max(0.0, cpu_ms / iters) : 0.0};
  noop_per_call.emplace(key, empty);  // keeps the first measurement
  return empty;
}

Status Lane::Impl::TimeReference(const std::string& problem, const std::string& mode,
                                 const std::vector<std::string>& slots, const BatchRequest& q,
                                 milliseconds timeout, BatchReply* reply, HostTimes* waited) {
  // The judge that runs the reference: an untrusted problem's is its confined judge (read only
  // when it was already running, as in NoopCost).
  const int pid = JudgePid(problem);
  const HostTimes h0 = pid > 0 ? ReadHostTimes(pid) : HostTimes{};
  auto r = JudgeRequest(
      problem, requests::TimeReference(problem, mode, slots, q.first, q.iters, q.delay_us), timeout);
  if (!r.ok()) return r.status();
  if (r->contains("unavailable")) return Status::NotFound((*r)["unavailable"].get<std::string>());
  if (q.first > 0 && pid > 0 && pid == JudgePid(problem)) *waited += ReadHostTimes(pid) - h0;
  ReadBatchReply(*r, reply);
  return Status::Ok();
}

std::string Lane::Impl::Disturbed(const TimingResult& t, const HostTimes& waited) const {
  return BaselineDisturbed({t.summary, t.stop_reason, waited.ok ? waited.thread_wait_ms : 0,
                            t.wall_ms, t.hidden_fraction(), opt.backend != "cpu"});
}

nlohmann::json Lane::Impl::GpuState(const std::string& problem) {
  auto r = JudgeRequest(problem, requests::Bare("gpu_state"), milliseconds(30000));
  if (!r.ok() || !r->contains("state")) return nlohmann::json::object();
  return (*r)["state"];
}

Result<int> Lane::Impl::PrepareRotation(const ProblemInfo& problem, const TimingOptions& opt,
                                        uint64_t seed) {
  const int pool_size = FitTimingPool(opt.pool, problem.memory);
  if (ReleaseBetweenPhases(problem.memory)) {
    // A big problem's correctness slot, or another run's, does not stay beside the rotation.
    if (Status s = ReleaseSlots(problem.id, PoolNames(pool_size)); !s.ok()) return s;
  }
  auto pool = PreparePool(problem.id, pool_size, seed);
  if (!pool.ok()) return pool.status();
  return pool_size;
}

Result<BaselineResult> Lane::TimeBaselines(const ProblemInfo& problem, const TimingOptions& opt,
                                           uint64_t seed) {
  Impl& m = *impl_;
  const std::string& problem_id = problem.id;
  auto rotation = m.PrepareRotation(problem, opt, seed);
  if (!rotation.ok()) return rotation.status();
  const int pool_size = *rotation;
  BaselineResult out;
  for (const char* mode : {"eager", "compile"}) {
    std::string unavailable;
    bool first_batch = true;
    HostTimes waited;
    waited.ok = true;
    BatchFn batch = [&](const BatchRequest& q, BatchReply* reply) -> Status {
      // torch.compile compiles on the first call: minutes, not seconds, on a cold cache.
      milliseconds timeout = first_batch ? milliseconds(900000) : milliseconds(300000);
      first_batch = false;
      Status s = m.TimeReference(problem_id, mode, PoolNames(pool_size), q, timeout, reply, &waited);
      if (s.code() == Code::kNotFound) unavailable = s.message();
      return s;
    };
    auto t = DriveTiming(opt, batch);
    if (t.ok()) {
      if (out.disturbed.empty()) out.disturbed = m.Disturbed(*t, waited);
      out.judge_wait_ms += waited.thread_wait_ms;
    }
    if (!t.ok()) {
      if (std::string(mode) == "compile" && !unavailable.empty()) {
        out.compile_unavailable = unavailable;
        continue;
      }
      if (std::string(mode) == "compile") {
        out.compile_unavailable = t.status().message();
        continue;
      }
      return t.status();
    }
    if (std::string(mode) == "eager") {
      out.eager = *t;
    } else {
      out.compiled = *t;
    }
  }
  return out;
}

Status Lane::WarmReference(const ProblemInfo& problem, const TimingOptions& opt, uint64_t seed) {
  Impl& m = *impl_;
  auto rotation = m.PrepareRotation(problem, opt, seed);
  if (!rotation.ok()) return rotation.status();
  const int pool_size = *rotation;
  for (const char* mode : {"eager", "compile"}) {
    BatchReply reply;
    HostTimes waited;
    // torch.compile compiles on the first call: minutes, not seconds, on a cold cache.
    Status s = m.TimeReference(problem.id, mode, PoolNames(pool_size),
                               {0, std::max(opt.warmup_iters, 2), 0}, milliseconds(900000), &reply,
                               &waited);
    if (!s.ok() && std::string(mode) == "eager") return s;
  }
  return Status::Ok();
}

ExecResult Lane::Run(const std::string& problem_id, const ProblemInfo& problem,
                     const std::string& code, const LoadInlineFn& load_inline,
                     const ExecOptions& opt) {
  ExecResult r = impl_->RunCandidate(problem_id, problem, code, load_inline, opt);
  // The peak covers this run alone: the judge resets it when asked.
  if (auto m = impl_->JudgeRequest(problem.id, requests::Bare("memory"), milliseconds(30000));
      m.ok()) {
    r.judge_peak_bytes = m->value("peak_bytes", int64_t{0});
  }
  return r;
}

}  // namespace kf::execute
