// The requests execute sends to the runner, one function each, so every message kforge builds
// is built in one place and checked against runner/protocol.json in one test
// (requests_test.cc). Field names and types: runner/protocol.json. Internal to execute.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/tolerance.h"

namespace kf::execute::requests {
using nlohmann::json;

// A request with no fields: exit, memory, gpu_state, release_slots.
json Bare(const std::string& op);

// The judge's.
json Hello(const std::string& device);
json Native(const std::filesystem::path& so, const std::string& module);  // judge and zygote
json LoadProblem(const std::string& id, const std::filesystem::path& path, uint64_t init_seed);
// `signed_inputs` unset: the field is left out (pool slots); `variant` < 0 and `swap_seed` 0
// likewise.
json Prepare(const std::string& problem, const std::string& slot, uint64_t seed,
             std::optional<bool> signed_inputs = {}, uint64_t swap_seed = 0, int variant = -1);
// `tol`'s maps go whole: the judge has no defaults of its own (a dtype they do not name is
// compared exactly).
json Check(const std::string& problem, const std::string& slot, const Tolerances& tol,
           const json& perturb = json());
// A batch of the reference in `mode` ("eager", "compile").
json TimeReference(const std::string& problem, const std::string& mode,
                   const std::vector<std::string>& slots, int first, int iters, double delay_us);
// `problem`'s trial buffers handed back, but those of the slots named in `keep`.
json ReleaseSlots(const std::string& problem, const std::vector<std::string>& keep);
// A shared buffer the trusted judge makes for the confined judge's borrow event: the event's
// shape and dtype, carried over (a non-array shape or a non-string dtype: left for the schema
// check to refuse).
json Lend(const json& borrow_event);
// Lent buffers freed: those in `ids`, or (nullopt) every one.
json Reclaim(const std::optional<std::vector<int64_t>>& ids);
// A batch of empty calls: what a timed call costs around the call itself.
json TimeNoop(const std::string& problem, const std::vector<std::string>& slots, int iters,
              uint64_t perturb_seed, double delay_us, bool outputs);

// The zygote's: `op` is "spawn" or "spawn_judge"; `jit_cache` empty: left out.
json Spawn(const std::string& op, const std::string& device, const std::filesystem::path& workdir,
           const std::filesystem::path& jit_cache);
json Reap(int pid, int timeout_s);

// A candidate host's. `watch`: [first, last] line pairs; empty, and `family` empty, are left out.
// `stateful`: the problem's model keeps state between calls, so the host starts every call of
// ModelNew from the state it was built with (runner/kforge_runner/state.py); false is left out.
json Load(const std::string& code, const std::string& problem_code, const json& init_inputs,
          uint64_t init_seed, const json& poison, const json& watch, const std::string& family,
          bool stateful = false);
json Call(const std::string& slot, const json& buffers, bool ablate = false, bool profile = false);
json TimeCandidate(const std::vector<std::string>& slots, const json& buffers, int first, int iters,
                   uint64_t perturb_seed, double delay_us);
json Emit(const std::string& slot, const json& buffers);
// Lets go of every slot's buffers but those named in `keep` (before the judge frees them).
json Release(const std::vector<std::string>& keep);
// kforge's answer to a candidate's load_inline event.
json LoadInlineAnswer(bool ok, const std::string& so_path, const std::string& module_name,
                      const std::string& message);

}  // namespace kf::execute::requests
