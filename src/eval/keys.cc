// The identities of verdicts and jobs: what a verdict depends on, in one place, and the store
// key an Evaluator files its verdicts under.
#include <algorithm>
#include <map>
#include <mutex>

#include "backend/backend.h"
#include "common/hash.h"
#include "eval/eval.h"
#include "eval/impl.h"

namespace kf::eval {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Bumped whenever the way a verdict is reached changes without an option changing (a new
// rule, another trial plan): verdicts stored by older kforge are then not handed back.
constexpr int kVerdictFormat = 15;  // 3: H03 and kernel-source H13 decided by what runs;
                                   // 4: dtype comparisons and computed mkdir paths too;
                                   // 5: void functions skipped in the ablation (H02), the
                                   //    candidate run in the problem's namespace, wrong timed
                                   //    outputs H15 only where untimed calls show it;
                                   // 6: Triton candidates (a @triton.jit program without
                                   //    load_inline was format_error no_kernel before);
                                   // 7: a wall-clock gap the reported mean covers is not H07
                                   // 8: the GPU's work timed, not the host's latency (a GPU
                                   //    delay before each start event); the reference timed
                                   //    interleaved with the candidate; speedup intervals;
                                   //    trials inside the input contract, H17 by what runs
                                   // 9: on the CPU, the empty call the wall-clock bound is
                                   //    calibrated with returns outputs like the reference's
                                   // 10: the wall-clock bound ruled on after the timed
                                   //    outputs: wrong outputs are H15 under any load (H07
                                   //    beside it when the gap escaped too)
                                   // 11: on the CPU, a host whose CPU time shows no work
                                   //    outside the timer is within the wall-clock bound;
                                   //    kernel-source CUDA graphs a note under kernelbench
                                   // 12: a model that keeps state between calls starts every
                                   //    call from the state it was built with, both sides
                                   // 13: on the CPU, the cache flush is 64 MiB at most and the
                                   //    CPU bound leaves an empty call's CPU out
                                   // 14: on the CPU, a gap the host's main thread made while
                                   //    on a CPU, its other threads idle, is busy, not H07
                                   // 15: timed calls' fresh inputs keep the input contract
                                   //    (symmetric, sorted, whole values, rows summing to 1)

// A digest of the runner's own files (its Python, the native helper's source, the policies):
// the verdict depends on that code as much as on the options, so a changed runner is never
// handed a verdict the old one gave. Computed once per folder.
std::string RunnerDigest(const fs::path& dir) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> l(mu);
  auto it = cache.find(dir.string());
  if (it != cache.end()) return it->second;
  std::vector<fs::path> files;
  std::error_code ec;
  if (!dir.empty() && fs::is_directory(dir, ec)) {
    for (auto i = fs::recursive_directory_iterator(dir, ec); !ec && i != fs::end(i); i.increment(ec)) {
      const fs::path& p = i->path();
      if (i->is_directory() && p.filename() == "__pycache__") {
        i.disable_recursion_pending();
        continue;
      }
      const std::string ext = p.extension().string();
      // protocol.json: the messages the runner speaks (calibration/*.json is data, not code).
      if (i->is_regular_file() && (ext == ".py" || ext == ".cpp" || ext == ".txt" ||
                                   p.filename() == "protocol.json")) {
        files.push_back(p);
      }
    }
  }
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& f : files) {
    auto text = ReadFile(f);
    all += fs::relative(f, dir, ec).string() + "\n" + Sha256Hex(text.ok() ? *text : "") + "\n";
  }
  return cache[dir.string()] = Sha256Hex(all);
}

json ToleranceJson(const std::map<std::string, double>& m) {
  json j = json::object();
  for (const auto& [dtype, v] : m) j[dtype] = v;
  return j;
}

}  // namespace

json VerdictSettings(const EvalOptions& opt) {
  const auto& e = opt.exec;
  const auto& t = e.timing;
  json settings = {
      {"format", kVerdictFormat},
      {"runner", RunnerDigest(opt.runner_dir)},
      {"backend", opt.backend},
      {"family", opt.family ? backend::FamilyName(*opt.family) : "auto"},
      {"baselines", opt.baselines},
      {"reference_as_candidate", opt.reference_as_candidate},
      {"reverify_speedup", opt.reverify_speedup},
      {"trials", e.trials},
      // A fixed seed makes a verdict reproducible, and so a different one; 0 draws fresh seeds.
      {"seed", e.seed},
      // The tolerances the judge applies, whole: an override equal to a default is no change.
      {"atol", ToleranceJson(e.tolerances.atol)},
      {"rtol", ToleranceJson(e.tolerances.rtol)},
      {"time_candidate", e.time_candidate},
      {"runtime_rules", e.runtime_rules},
      {"allow_libraries", e.allow_libraries},
      {"policy", execute::PolicyName(e.policy)},
      // Edits to the allowlist file change what strict accepts and what kernelbench lists.
      {"allowed_aten", e.allowed_aten},
      {"timing",
       {{"warmup_iters", t.warmup_iters},
        {"min_samples", t.min_samples},
        {"max_samples", t.max_samples},
        {"target_spread", t.target_spread},
        {"budget_ms", t.budget_ms},
        {"batch_target_ms", t.batch_target_ms},
        {"pool", t.pool}}},
      {"load_timeout_ms", e.load_timeout.count()},
      {"call_timeout_ms", e.call_timeout.count()},
      {"reward",
       {{"lambda", opt.reward.lambda},
        {"nu_max", opt.reward.nu_max},
        {"against_compile", opt.reward.against_compile},
        {"significance", opt.reward.significance}}},
  };
  // Light headers and split builds are not settings: they change no kernel (identical device
  // code on sm_90), so a verdict has one key built either way (the artifacts keep keys of their
  // own). Verdicts stored with --split-build while it was on trial keep their older key.
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

// The store under this evaluator: its keys (the settings, the toolchain and the device model)
// and what is stored under them.
std::optional<Verdict> Evaluator::Lookup(const fs::path& problem_path,
                                         const std::string& candidate_text) {
  auto src = ReadFile(problem_path);
  if (!src.ok()) return std::nullopt;
  std::string key = impl_->StoreKey(Sha256Hex(*src), Sha256Hex(candidate_text));
  if (key.empty()) return std::nullopt;
  auto v = impl_->store->GetVerdict(key);
  if (!v.ok() || !v->has_value()) return std::nullopt;
  return **v;
}

std::string Evaluator::StoreKey(const std::string& problem_hash,
                                const std::string& candidate_hash) {
  return impl_->StoreKey(problem_hash, candidate_hash);
}

std::optional<json> Evaluator::Impl::Environment() {
  std::lock_guard<std::mutex> g(env_mu);
  if (!environment) {
    auto fp = builder->Fingerprint();  // a worker's `hello`: no torch import
    if (!fp.ok()) return std::nullopt;
    const backend::Device* d = backend::FindDevice(opt.backend);
    environment = json{{"toolchain", *fp},
                       {"device", d ? backend::DeviceModel(*d) : "unknown " + opt.backend}};
  }
  return environment;
}

std::string Evaluator::Impl::StoreKey(const std::string& problem_hash,
                                      const std::string& candidate_hash) {
  auto env = Environment();
  if (!env) return "";
  return VerdictKey(problem_hash, candidate_hash, settings_digest, *env);
}

}  // namespace kf::eval
