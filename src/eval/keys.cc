// The identities of verdicts and jobs: what a verdict depends on, in one place.
#include <algorithm>
#include <fstream>
#include <map>

#include "common/hash.h"
#include "eval/eval.h"

namespace kf::eval {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Bumped whenever the way a verdict is reached changes without an option changing (a new
// rule, another trial plan): verdicts stored by older kforge are then not handed back.
constexpr int kVerdictFormat = 5;  // 3: H03 and kernel-source H13 decided by what runs;
                                   // 4: dtype comparisons and computed mkdir paths too;
                                   // 5: void functions skipped in the ablation (H02), the
                                   //    candidate run in the problem's namespace, wrong timed
                                   //    outputs H15 only where untimed calls show it

json ToleranceJson(const std::map<std::string, double>& m) {
  json j = json::object();
  for (const auto& [dtype, v] : m) j[dtype] = v;
  return j;
}

// The first line of `path` that starts with `key`, after its colon; "" when there is none.
std::string FieldOf(const fs::path& path, const std::string& key) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto first = line.find_first_not_of(" \t", colon + 1);
    return first == std::string::npos ? "" : line.substr(first);
  }
  return "";
}

}  // namespace

json VerdictSettings(const EvalOptions& opt) {
  const auto& e = opt.exec;
  const auto& t = e.timing;
  json settings = {
      {"format", kVerdictFormat},
      {"backend", opt.backend},
      {"baselines", opt.baselines},
      {"reference_as_candidate", opt.reference_as_candidate},
      {"reverify_speedup", opt.reverify_speedup},
      {"trials", e.trials},
      // A fixed seed makes a verdict reproducible, and so a different one; 0 draws fresh seeds.
      {"seed", e.seed},
      {"atol", ToleranceJson(e.atol)},
      {"rtol", ToleranceJson(e.rtol)},
      {"time_candidate", e.time_candidate},
      {"runtime_rules", e.runtime_rules},
      {"allow_libraries", e.allow_libraries},
      {"policy", execute::PolicyName(e.policy)},
      // Edits to the allowlist file change what strict accepts and what kernelbench lists.
      {"allowed_aten", e.allowed_aten},
      {"timing",
       {{"warmup_iters", t.warmup_iters}, {"min_samples", t.min_samples},
        {"max_samples", t.max_samples}, {"target_spread", t.target_spread},
        {"budget_ms", t.budget_ms}, {"batch_target_ms", t.batch_target_ms}, {"pool", t.pool}}},
      {"load_timeout_ms", e.load_timeout.count()},
      {"call_timeout_ms", e.call_timeout.count()},
      {"reward",
       {{"lambda", opt.reward.lambda}, {"nu_max", opt.reward.nu_max},
        {"against_compile", opt.reward.against_compile}}},
  };
  // Light headers must not change a verdict, but until the GPU machine shows that, its verdicts
  // are kept apart. Only when on: every other job keeps the settings (and digest) it had.
  if (opt.light_headers) settings["light_headers"] = true;
  return settings;
}

std::string SettingsDigest(const EvalOptions& opt) { return Sha256Hex(VerdictSettings(opt).dump()); }

std::string JobKey(const std::string& problem_hash, const std::string& candidate_hash,
                   const std::string& settings_digest) {
  return Sha256Hex(problem_hash + "|" + candidate_hash + "|" + settings_digest);
}

std::string VerdictKey(const std::string& problem_hash, const std::string& candidate_hash,
                       const std::string& settings_digest, const json& environment) {
  return Sha256Hex("verdict|" + JobKey(problem_hash, candidate_hash, settings_digest) + "|" +
                   environment.dump());
}

std::string DeviceModel(const std::string& backend, const fs::path& proc) {
  if (backend == "cuda") {
    // The driver's own description of each GPU; no CUDA call, so no context in this process.
    std::vector<std::string> models;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(proc / "driver/nvidia/gpus", ec)) {
      std::string m = FieldOf(e.path() / "information", "Model");
      if (!m.empty()) models.push_back(m);
    }
    std::sort(models.begin(), models.end());
    models.erase(std::unique(models.begin(), models.end()), models.end());
    std::string out;
    for (const auto& m : models) out += (out.empty() ? "" : ", ") + m;
    return out.empty() ? "unknown GPU" : out;
  }
  std::string cpu = FieldOf(proc / "cpuinfo", "model name");
  return cpu.empty() ? "unknown CPU" : cpu;
}

}  // namespace kf::eval
