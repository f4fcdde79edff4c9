// The lifecycle of one candidate host process: forked from the lane's zygote into a fresh
// private folder, asked requests over its channel (serving the load_inline builds it asks for
// meanwhile), and at the end killed with its process group, reaped through the zygote and its
// folder removed. The zygote is any RunnerProc, so tests drive it over a socket pair
// (candidate_process_test.cc). Internal to execute.
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/channel.h"
#include "common/status.h"
#include "execute/lane_impl.h"

namespace kf::execute {

class CandidateProcess {
 public:
  // Both are borrowed and must outlive this object.
  CandidateProcess(RunnerProc& zygote, const LoadInlineFn& load_inline)
      : zygote_(zygote), load_inline_(load_inline) {}
  ~CandidateProcess() { Stop(); }
  CandidateProcess(const CandidateProcess&) = delete;
  CandidateProcess& operator=(const CandidateProcess&) = delete;

  // Asks the zygote for a candidate host on `device` in `workdir` (made empty first);
  // `jit_cache`, when given, is the one other folder it may write (SpawnFromZygote).
  Status Spawn(const std::string& device, const std::filesystem::path& workdir,
               const std::filesystem::path& jit_cache = {});
  // Takes a host the zygote forked already (Lane::Impl::TakeHost) as this process's.
  void Adopt(ZygoteChild child);

  // Sends a request and serves the candidate's load_inline events until the answer comes.
  // Time spent building for it does not count against `timeout`. kTimeout when the answer is
  // late, kUnavailable when the process closed its channel, kInvalidArgument when kforge's own
  // message breaks the protocol (common/protocol.h). A message from the host that breaks it is
  // answered as the host's failure: {"ok": false, "kind": "protocol", "message": why}.
  Result<nlohmann::json> Ask(const nlohmann::json& msg, std::chrono::milliseconds timeout);

  // How a candidate that closed its channel ended, from the zygote: "it was killed by signal
  // 11 (Segmentation fault)", "it exited with code 1". One still running is killed first.
  std::string Reap();

  // Kills the process group if it is alive, reaps it (waiting until it is gone) and removes
  // the private folder. Idempotent.
  void Stop();

  int pid() const { return child_.pid; }  // -1 when none runs (never spawned, reaped, stopped)
  const std::filesystem::path& workdir() const { return child_.workdir; }
  // One of the load_inline builds the candidate asked for failed.
  bool build_failed() const { return build_failed_; }

 private:
  RunnerProc& zygote_;
  const LoadInlineFn& load_inline_;
  ZygoteChild child_;  // its pid and folder; the channel is moved to chan_
  Channel chan_;
  bool build_failed_ = false;
};

}  // namespace kf::execute
