// The real parts of an Evaluator: thin adapters over execute::Lane, build::Builder and
// store::Store, and the options that make them (what Evaluator::Create used to do inline).
#include "eval/parts.h"

#include <cstdlib>

#include "common/affinity.h"
#include "eval/eval.h"
#include "store/store.h"

namespace kf::eval {
namespace {
namespace fs = std::filesystem;

class RealLane : public LaneRunner {
 public:
  RealLane(std::unique_ptr<execute::Lane> lane, execute::LaneOptions opt)
      : lane_(std::move(lane)), opt_(std::move(opt)) {}
  Result<execute::DeviceInfo> Ready(const fs::path& native_so, const std::string& module) override {
    return lane_->Ready(native_so, module);
  }
  Result<execute::ProblemInfo> LoadProblem(const std::string& id, const fs::path& path,
                                           uint64_t init_seed, bool trusted) override {
    return lane_->LoadProblem(id, path, init_seed, trusted);
  }
  Result<execute::BaselineResult> TimeBaselines(const execute::ProblemInfo& problem,
                                                const execute::TimingOptions& opt,
                                                uint64_t seed) override {
    return lane_->TimeBaselines(problem, opt, seed);
  }
  Status WarmReference(const execute::ProblemInfo& problem, const execute::TimingOptions& opt,
                       uint64_t seed) override {
    return lane_->WarmReference(problem, opt, seed);
  }
  execute::ExecResult Run(const std::string& problem_id, const execute::ProblemInfo& problem,
                          const std::string& code, const execute::LoadInlineFn& load_inline,
                          const execute::ExecOptions& opt) override {
    return lane_->Run(problem_id, problem, code, load_inline, opt);
  }
  bool Alive() override { return lane_->Alive(); }
  Status Restart() override {
    auto lane = execute::Lane::Start(opt_);
    if (!lane.ok()) return lane.status();
    lane_ = std::move(lane.value());  // the old lane's destructor reaps what is left of it
    return Status::Ok();
  }

 private:
  std::unique_ptr<execute::Lane> lane_;
  execute::LaneOptions opt_;
};

class RealBuilder : public ArtifactBuilder {
 public:
  explicit RealBuilder(const build::BuildOptions& opt) : builder_(opt) {}
  Result<nlohmann::json> Fingerprint() override { return builder_.Fingerprint(); }
  Result<build::Artifact> Build(const ExtensionSpec& spec) override { return builder_.Build(spec); }
  Result<build::Artifact> BuildNative() override { return builder_.BuildNative(); }

 private:
  build::Builder builder_;
};

class RealStore : public VerdictStore {
 public:
  explicit RealStore(std::unique_ptr<store::Store> store) : store_(std::move(store)) {}
  Result<std::optional<Verdict>> GetVerdict(const std::string& key) override {
    return store_->GetVerdict(key);
  }
  Status PutVerdict(const std::string& key, const Verdict& v) override {
    return store_->PutVerdict(key, v);
  }
  Result<std::optional<nlohmann::json>> GetBaseline(const std::string& key) override {
    return store_->GetBaseline(key);
  }
  Status PutBaseline(const std::string& key, const nlohmann::json& value) override {
    return store_->PutBaseline(key, value);
  }

 private:
  std::unique_ptr<store::Store> store_;
};

class RealSteadyClock : public SteadyClock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
};

build::BuildOptions BuilderOptions(const EvalOptions& opt) {
  build::BuildOptions bo;
  bo.python = opt.python;
  bo.runner_dir = opt.runner_dir;
  bo.cache_dir = opt.cache_dir;
  // Compiled extensions may live apart from the verdict store, shared by several caches.
  if (const char* shared = std::getenv("KFORGE_BUILD_CACHE"); shared && *shared) {
    bo.build_cache = shared;
  }
  bo.backend = opt.backend;
  bo.workers = opt.build_workers;
  const char* no_pch = std::getenv("KFORGE_NO_PCH");
  bo.pch = opt.pch && !(no_pch && *no_pch && std::string(no_pch) != "0");
  bo.light_headers = opt.light_headers;
  bo.split_build = opt.split_build;
  bo.cached_bindings = opt.cached_bindings;
  return bo;
}

}  // namespace

std::unique_ptr<SteadyClock> RealClock() { return std::make_unique<RealSteadyClock>(); }

Result<EvaluatorParts> RealParts(const EvalOptions& opt) {
  EvaluatorParts parts;
  auto st = store::Store::Open(opt.cache_dir / "kforge.db");
  if (!st.ok()) return st.status();
  parts.store = std::make_unique<RealStore>(std::move(st.value()));
  build::BuildOptions bo = BuilderOptions(opt);
  std::vector<int> devices = opt.devices;
  if (devices.empty()) devices.push_back(opt.device_index);
  if (!opt.lanes) devices.clear();
  // On a GPU machine with cores to spare, each lane's processes get two cores of their own and
  // the compilers the rest (a timed call's host side never waits behind nvcc); a CPU lane
  // computes on every core, so the CPU backend keeps them all.
  const CpuSplit split = opt.backend == "cpu"
                             ? CpuSplit{}
                             : SplitCpus(AllowedCpus(), static_cast<int>(devices.size()));
  bo.cpus = split.builds;
  parts.builder = std::make_unique<RealBuilder>(bo);
  for (size_t i = 0; i < devices.size(); ++i) {
    execute::LaneOptions lo;
    if (i < split.lanes.size()) lo.cpus = split.lanes[i];
    lo.python = opt.python;
    lo.runner_dir = opt.runner_dir;
    lo.backend = opt.backend;
    lo.device_index = devices[i];
    lo.work_dir = opt.cache_dir / "work" / ("lane" + std::to_string(i));
    lo.prestart_host = opt.prestart_host;
    auto lane = execute::Lane::Start(lo);  // imports torch in the background from here on
    if (!lane.ok()) return lane.status();
    parts.lanes.push_back(std::make_unique<RealLane>(std::move(lane.value()), lo));
  }
  parts.clock = RealClock();
  return parts;
}

}  // namespace kf::eval
