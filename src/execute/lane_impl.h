// Lane internals shared by lane.cc (processes, problems, baselines) and run.cc (one
// candidate's run). Internal to execute.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <random>

#include "execute/execute.h"
#include "execute/host_times.h"
#include "execute/runner_proc.h"

namespace kf::execute {

// One timed batch: `iters` calls starting at rotation index `first`, each with a GPU sleep of
// `delay_us` before its start event (ChooseDelayUs), so the host's latency in making the call
// stays out of the interval.
struct BatchRequest {
  int first = 0;
  int iters = 0;
  double delay_us = 0;
};
// What the timed process reported: device ms per call, the host's ms per call (the forward's
// Python and launches) and how many calls returned before the GPU reached their start event.
struct BatchReply {
  std::vector<double> device_ms;
  std::vector<double> host_ms;
  int hidden = 0;
};
using BatchFn = std::function<Status(const BatchRequest& request, BatchReply* reply)>;
// Fills `reply` from a `time` reply of the judge or of a candidate host.
void ReadBatchReply(const nlohmann::json& r, BatchReply* reply);

// Warm-up (no delay), the delay chosen from the warm-up's host times, then batches until the
// stopping rule says stop. Returns samples, the delay, the hidden calls and the wall time
// measured here around the timed batches.
Result<TimingResult> DriveTiming(const TimingOptions& opt, const BatchFn& batch);

// What an empty timed call cost the judge, per call, outside its timer: wall time, and the CPU
// time of all its threads (the cache flush before each call, on the CPU backend most of it;
// 0 where the judge's /proc times could not be read, or it was replaced during the measurement).
struct EmptyCall {
  double ms = 0;
  double cpu_ms = 0;
};

// A process the lane's zygote forked (a candidate host, or the confined judge of an untrusted
// problem): its pid (the leader of its process group) and its private folder.
struct ZygoteChild {
  int pid = -1;
  Channel chan;
  std::filesystem::path workdir;
};
// Forks one: `op` is "spawn" (candidate host) or "spawn_judge"; `workdir` is made empty first.
// `jit_cache`, when given, is made if missing and is the one other folder the child may write
// (its compiler's cache: ExecOptions::jit_cache).
Result<ZygoteChild> SpawnFromZygote(RunnerProc& zygote, const std::string& op,
                                    const std::string& device, const std::filesystem::path& workdir,
                                    const std::filesystem::path& jit_cache = {});
// Kills its process group, reaps it through the zygote (waiting until it is gone: a large CUDA
// context takes seconds to give its memory back) and removes its folder. Idempotent.
void StopZygoteChild(RunnerProc& zygote, ZygoteChild* child);

class Lane::Impl {
 public:
  LaneOptions opt;
  RunnerProc judge;  // trusted: problems the operator registered or the user named
  std::filesystem::path judge_shm;  // its shared buffers' folder (hello's shm_dir)
  RunnerProc zygote;
  // Problems whose text came with a request are never imported by `judge`: each runs in a
  // judge of its own, forked from the zygote and confined like a candidate. At most one lives
  // at a time (the lane's current untrusted problem); any other problem's work stops it, and
  // it is forked and loaded again from `untrusted` when its problem is next used.
  struct Confined {
    std::string problem;
    ZygoteChild proc;
    RunnerProc judge;  // its channel, for Request
    bool borrowed = false;  // the trusted judge lent it buffers: reclaimed when it stops
  };
  std::optional<Confined> confined;
  std::map<std::string, nlohmann::json> untrusted;  // problem id -> its load_problem message
  nlohmann::json native_msg;                        // the helper, for confined judges' "native"
  DeviceInfo device;
  bool ready = false;
  int spawned = 0;
  // With LaneOptions::prestart_host, the next candidate's host: forked as a run begins so that
  // its start (on a GPU, CUDA's initialisation: 327 of a 346 ms load on an H100, 2026-12-06)
  // overlaps that run. It is confined from its start like any host and runs no candidate code
  // until a run takes it.
  struct Spare {
    ZygoteChild proc;
    std::string device;
    std::filesystem::path jit_cache;
  };
  std::optional<Spare> spare;
  // The judge's measured cost of an empty timed call given fresh inputs, by problem and GPU
  // delay: the inputs' size sets what rewriting them costs, the delay what the GPU waits.
  std::map<std::pair<std::string, double>, EmptyCall> noop_per_call;

  // A request to the judge that holds `problem`: `judge`, or the confined one of an untrusted
  // problem (forked and loaded first when it is not the current one; stopped when it dies or
  // hangs, and by any other problem's request).
  Result<nlohmann::json> JudgeRequest(const std::string& problem, const nlohmann::json& msg,
                                      std::chrono::milliseconds timeout);
  // A candidate host for `device` whose one writable folder beside its own is `jit_cache`:
  // the spare when it matches and still runs (*prestarted), else one forked now into a fresh
  // folder. With prestart_host the next spare is forked before it returns.
  Result<ZygoteChild> TakeHost(const std::string& device, const std::filesystem::path& jit_cache,
                               bool* prestarted);
  void StopSpare();
  std::filesystem::path NextHostFolder();
  // A request to the confined judge, its borrow and give_back events answered by the trusted
  // judge's lend and reclaim.
  Result<nlohmann::json> ConfinedRequest(const nlohmann::json& msg,
                                         std::chrono::milliseconds timeout);
  // Forks a confined judge for `problem`, readies it and loads the problem; its load reply.
  Result<nlohmann::json> StartConfined(const std::string& problem);
  void StopConfined();

  std::string DeviceName() const {
    const backend::Device* d = backend::FindDevice(opt.backend);
    return d ? d->TorchDevice(opt.device_index) : "cpu";
  }
  // The judge hands back `problem`'s trial buffers but those of the slots in `keep` (a big
  // problem between phases: ReleaseBetweenPhases). A candidate host that mapped them lets go
  // of them first (CandidateRun::ReleaseSlots).
  Status ReleaseSlots(const std::string& problem, const std::vector<std::string>& keep);
  // Fills pool slots T0..T(P-1) with inputs drawn from `seed`; returns their descriptors.
  Result<std::vector<nlohmann::json>> PreparePool(const std::string& problem, int pool,
                                                  uint64_t seed);
  // `fresh` measures again now (the machine's load may have changed) without replacing the
  // first measurement, which later candidates keep using.
  // The pid whose /proc times are the judge of `problem` now (-1: its confined judge is not
  // running).
  int JudgePid(const std::string& problem) const;
  // The timing rotation's slots filled from `seed` (FitTimingPool: fewer for big problems,
  // other slots released first where ReleaseBetweenPhases says); its size.
  Result<int> PrepareRotation(const ProblemInfo& problem, const TimingOptions& opt, uint64_t seed);
  Result<EmptyCall> NoopCost(const std::string& problem, int pool, uint64_t perturb_seed,
                             double delay_us, bool fresh = false);
  // One batch of the reference in `mode` ("eager", "compile") timed by the judge: NotFound with
  // the judge's reason when the mode is unavailable (no torch.compile). For timed batches
  // (first > 0) the judge's main thread's waits for a CPU are added to `waited`.
  Status TimeReference(const std::string& problem, const std::string& mode,
                       const std::vector<std::string>& slots, const BatchRequest& q,
                       std::chrono::milliseconds timeout, BatchReply* reply, HostTimes* waited);
  // BaselineDisturbed of a reference's measurement and the judge's waits during it.
  std::string Disturbed(const TimingResult& t, const HostTimes& waited) const;
  // The GPU's clocks, temperature, power and throttle reasons now (the judge reads NVML);
  // an empty object on the CPU or where NVML is missing.
  nlohmann::json GpuState(const std::string& problem);
  ExecResult RunCandidate(const std::string& problem_id, const ProblemInfo& problem,
                          const std::string& code, const LoadInlineFn& load_inline,
                          const ExecOptions& opt);
};

std::vector<std::string> PoolNames(int pool);

}  // namespace kf::execute
