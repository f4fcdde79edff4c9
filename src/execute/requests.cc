#include "execute/requests.h"

#include "common/protocol.h"

namespace kf::execute::requests {

json Bare(const std::string& op) { return {{"op", op}}; }

json Hello(const std::string& device) {
  return {{"op", "hello"}, {"device", device}, {"protocol", protocol::Embedded().version()}};
}

json Native(const std::filesystem::path& so, const std::string& module) {
  return {{"op", "native"}, {"path", so.string()}, {"module_name", module}};
}

json LoadProblem(const std::string& id, const std::filesystem::path& path, uint64_t init_seed) {
  return {{"op", "load_problem"},
          {"id", id},
          {"path", std::filesystem::absolute(path).string()},
          {"init_seed", init_seed}};
}

json Prepare(const std::string& problem, const std::string& slot, uint64_t seed,
             std::optional<bool> signed_inputs, uint64_t swap_seed, int variant) {
  json msg = {{"op", "prepare"}, {"problem", problem}, {"slot", slot}, {"seed", seed}};
  if (signed_inputs) msg["signed"] = *signed_inputs;
  if (swap_seed) msg["swap_seed"] = swap_seed;
  if (variant >= 0) msg["variant"] = variant;
  return msg;
}

json Check(const std::string& problem, const std::string& slot, const Tolerances& tol,
           const json& perturb) {
  // An empty map is an empty object (every dtype exact), never null.
  json msg = {{"op", "check"},
              {"problem", problem},
              {"slot", slot},
              {"atol", json::object()},
              {"rtol", json::object()}};
  for (const auto& [dtype, v] : tol.atol) msg["atol"][dtype] = v;
  for (const auto& [dtype, v] : tol.rtol) msg["rtol"][dtype] = v;
  if (!perturb.is_null()) msg["perturb"] = perturb;
  return msg;
}

json TimeReference(const std::string& problem, const std::string& mode,
                   const std::vector<std::string>& slots, int first, int iters, double delay_us) {
  return {{"op", "time"},   {"problem", problem}, {"mode", mode},        {"slots", slots},
          {"first", first}, {"iters", iters},     {"delay_us", delay_us}};
}

json TimeNoop(const std::string& problem, const std::vector<std::string>& slots, int iters,
              uint64_t perturb_seed, double delay_us, bool outputs) {
  return {{"op", "time"},
          {"problem", problem},
          {"mode", "noop"},
          {"slots", slots},
          {"first", 0},
          {"iters", iters},
          {"perturb_seed", perturb_seed},
          {"delay_us", delay_us},
          {"outputs", outputs}};
}

json Spawn(const std::string& op, const std::string& device, const std::filesystem::path& workdir,
           const std::filesystem::path& jit_cache) {
  json msg = {{"op", op}, {"device", device}, {"workdir", workdir.string()}};
  if (!jit_cache.empty()) msg["jit_cache"] = jit_cache.string();
  return msg;
}

json Reap(int pid, int timeout_s) {
  return {{"op", "reap"}, {"pid", pid}, {"timeout_s", timeout_s}};
}

json Load(const std::string& code, const std::string& problem_code, const json& init_inputs,
          uint64_t init_seed, const json& poison, const json& watch, const std::string& family,
          bool stateful) {
  json msg = {{"op", "load"},
              {"code", code},
              {"problem_code", problem_code},
              {"init_inputs", init_inputs},
              {"init_seed", init_seed},
              {"poison", poison}};
  if (!watch.empty()) msg["watch"] = watch;
  if (!family.empty()) msg["family"] = family;
  if (stateful) msg["stateful"] = true;
  return msg;
}

json Call(const std::string& slot, const json& buffers, bool ablate, bool profile) {
  json msg = {{"op", "call"}, {"slot", slot}, {"buffers", buffers}};
  if (ablate) msg["ablate"] = true;
  if (profile) msg["profile"] = true;
  return msg;
}

json TimeCandidate(const std::vector<std::string>& slots, const json& buffers, int first, int iters,
                   uint64_t perturb_seed, double delay_us) {
  return {{"op", "time"},        {"slots", slots}, {"buffers", buffers},
          {"first", first},      {"iters", iters}, {"perturb_seed", perturb_seed},
          {"delay_us", delay_us}};
}

json Emit(const std::string& slot, const json& buffers) {
  return {{"op", "emit"}, {"slot", slot}, {"buffers", buffers}};
}

json Release(const std::vector<std::string>& keep) { return {{"op", "release"}, {"keep", keep}}; }

json ReleaseSlots(const std::string& problem, const std::vector<std::string>& keep) {
  return {{"op", "release_slots"}, {"problem", problem}, {"keep", keep}};
}

json Lend(const json& borrow_event) {
  return {{"op", "lend"},
          {"shape", borrow_event.value("shape", json())},
          {"dtype", borrow_event.value("dtype", json())}};
}

json Reclaim(const std::optional<std::vector<int64_t>>& ids) {
  json m = {{"op", "reclaim"}};
  if (ids) m["ids"] = *ids;
  return m;
}

json LoadInlineAnswer(bool ok, const std::string& so_path, const std::string& module_name,
                      const std::string& message) {
  return {{"ok", ok}, {"so_path", so_path}, {"module_name", module_name}, {"message", message}};
}

}  // namespace kf::execute::requests
