// The parts an Evaluator works through, as small interfaces: the execution lanes, the artifact
// builder, the verdict store and the clock. Evaluator::Create builds the real ones (thin
// adapters over execute::Lane, build::Builder and store::Store: RealParts); tests hand
// Evaluator::CreateWith fakes that crash, hang, refuse writes or stand still, with no Python,
// compiler or GPU.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "build/build.h"
#include "common/extension_spec.h"
#include "common/status.h"
#include "execute/execute.h"
#include "score/verdict.h"

namespace kf::eval {

struct EvalOptions;

// What the Evaluator asks of one execution lane (execute::Lane; see execute.h for each call's
// contract). Used by one thread at a time, as a Lane is.
class LaneRunner {
 public:
  virtual ~LaneRunner() = default;
  // Waits until the lane can run; loads the compiled timing helper into it.
  virtual Result<execute::DeviceInfo> Ready(const std::filesystem::path& native_so,
                                            const std::string& module) = 0;
  virtual Result<execute::ProblemInfo> LoadProblem(const std::string& id,
                                                   const std::filesystem::path& path,
                                                   uint64_t init_seed, bool trusted) = 0;
  virtual Result<execute::BaselineResult> TimeBaselines(const execute::ProblemInfo& problem,
                                                        const execute::TimingOptions& opt,
                                                        uint64_t seed) = 0;
  virtual Status WarmReference(const execute::ProblemInfo& problem,
                               const execute::TimingOptions& opt, uint64_t seed) = 0;
  // Never fails as a call: a crash, hang or lost judge comes back as the result's outcome
  // (kInfraError for the lane's own faults) and diagnostics.
  virtual execute::ExecResult Run(const std::string& problem_id,
                                  const execute::ProblemInfo& problem, const std::string& code,
                                  const execute::LoadInlineFn& load_inline,
                                  const execute::ExecOptions& opt) = 0;
  // Whether the lane's own processes (judge, zygote) are still there; one that died (killed
  // from outside, out of memory) answers nothing again.
  virtual bool Alive() = 0;
  // Ends what is left of the lane and starts it anew: nothing loaded, Ready again.
  virtual Status Restart() = 0;
};

// What the Evaluator asks of the builder (build::Builder). Thread-safe: Prepare builds from
// many threads, and the timing helper builds in the background.
class ArtifactBuilder {
 public:
  virtual ~ArtifactBuilder() = default;
  // The toolchain description the store's keys cover.
  virtual Result<nlohmann::json> Fingerprint() = 0;
  // An error Status is the machine's fault (infra_error); an Artifact with !ok is the
  // candidate's (compile_error), unless its `environment` is set.
  virtual Result<build::Artifact> Build(const ExtensionSpec& spec) = 0;
  // kforge's own compiled helper, which every lane loads (LaneRunner::Ready).
  virtual Result<build::Artifact> BuildNative() = 0;
};

// What the Evaluator asks of the store (store::Store). Thread-safe. Writes are best effort:
// a failed write loses a cache entry, never a verdict.
class VerdictStore {
 public:
  virtual ~VerdictStore() = default;
  virtual Result<std::optional<Verdict>> GetVerdict(const std::string& key) = 0;
  virtual Status PutVerdict(const std::string& key, const Verdict& v) = 0;
  virtual Result<std::optional<nlohmann::json>> GetBaseline(const std::string& key) = 0;
  virtual Status PutBaseline(const std::string& key, const nlohmann::json& value) = 0;
};

// The time source of the verdict's stage durations: the one seam for time in the Evaluator.
// Thread-safe.
class SteadyClock {
 public:
  virtual ~SteadyClock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
};

// Everything an Evaluator works through; it owns them from creation on.
struct EvaluatorParts {
  std::unique_ptr<ArtifactBuilder> builder;  // required
  std::unique_ptr<VerdictStore> store;       // required
  // One per lane (lane i is lanes[i]); none: a process that only prepares (a build worker),
  // whose Execute answers infra_error for anything not already decided.
  std::vector<std::unique_ptr<LaneRunner>> lanes;
  std::unique_ptr<SteadyClock> clock;  // null: std::chrono::steady_clock
};

// std::chrono::steady_clock behind the interface.
std::unique_ptr<SteadyClock> RealClock();
// The production parts for `opt`: the store at cache_dir/kforge.db, a Builder (its options from
// `opt` and $KFORGE_BUILD_CACHE, $KFORGE_NO_PCH), and one started Lane per device (none when
// !opt.lanes), with the CPUs split between lanes and builds on a GPU backend.
Result<EvaluatorParts> RealParts(const EvalOptions& opt);

}  // namespace kf::eval
