// synth: new KernelBench-format problems from random typed operator graphs (`kforge synth`).
//
// A problem is drawn from a seed and its index alone (so the same seed gives the same bytes),
// sized with a per-op cost model calibrated on the backend (`--target-ms`), given shape variants
// of its free sizes (KFORGE_SHAPE_VARIANTS), deduplicated by a canonical graph hash, checked
// against a benchmark folder for near-copies, and validated by running its reference in the
// Python runner (finite, non-trivial outputs: the lint-problems checks) before it is kept.
// Generation, hashing and decontamination are C++; the reference runs behind the Checker
// interface (the real one spawns `python3 -m kforge_runner.synth`; tests pass fakes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace kf::synth {

// ---- the op table ------------------------------------------------------------------------
struct OpInfo {
  std::string name, category;
  std::vector<int> ranks;
  std::vector<std::string> dtypes;
  bool heavy = false;
};
std::vector<OpInfo> ListOps();

// ---- running references ------------------------------------------------------------------
struct CheckResult {
  bool ok = false;
  std::vector<std::string> findings;  // "code: message" (lint codes, load_error, variant_error)
  double reference_ms = 0;            // median eager time of the main shape set
};

class Checker {
 public:
  virtual ~Checker() = default;
  // Loads each problem file, runs its reference on every shape set and the lint-problems
  // checks, and times the main set. One result per file, in order.
  virtual Result<std::vector<CheckResult>> Check(
      const std::vector<std::filesystem::path>& files) = 0;
  // Times the reference on the main set, then each variant in order, stopping after the first
  // that takes more than stop_ms (or fails). One list of times per file.
  virtual Result<std::vector<std::vector<double>>> Time(
      const std::vector<std::filesystem::path>& files, double stop_ms) = 0;
};

struct PythonCheckerOptions {
  std::string python = "python3";
  std::filesystem::path runner_dir;  // holds kforge_runner/
  std::string device = "cpu";        // "cpu", "cuda"
  int draws = 3;                     // the linter's seeded input draws
  int timeout_s = 3600;              // one runner start, all its problems
  // One problem: a problem the runner has not answered this long after the one before (or,
  // for the first, after the runner's own start allowance) is dropped as check_timeout, the
  // runner killed and started again on the problems after it.
  int problem_timeout_s = 60;
  int start_allowance_s = 120;  // importing torch and starting the device, once a start
};
std::unique_ptr<Checker> MakePythonChecker(const PythonCheckerOptions& opt);

// ---- cost model --------------------------------------------------------------------------
// Per op, the reference's measured time against its work (FLOPs for GEMM-shaped ops, attention
// and convolutions; bytes moved for the others) at doubling sizes. Eager time is far from
// linear in size (small calls are overhead; on the CPU large outputs are fresh pages to fault
// in), so the curve is kept whole and read by interpolation.
struct OpCurve {
  std::vector<std::pair<double, double>> points;  // (work, ms), work ascending, ms not falling
  // log-log interpolation; below the first point its time (the call's overhead); above the
  // last, the last point's rate. No points: 1 ms per 1e6 work.
  double Ms(double work) const;
};
struct Calibration {
  std::string backend, device;
  std::map<std::string, OpCurve> ops;
  OpCurve fallback;                  // ops the file does not name: relu's curve (bytes)
  OpCurve fallback_heavy;            // GEMM-shaped ops it does not name: matmul's curve (FLOPs)
  std::vector<std::string> skipped;  // Calibrate: ops whose probe could not run (not saved)
};
Result<Calibration> LoadCalibration(const std::filesystem::path& file);
// A note for synth to print when `cal` was measured on another GPU than `here` (this machine's,
// backend::DeviceModel; "" when unknown): problems sized by it take another time on this one.
// "" when the models match, or either is unknown.
std::string OtherDeviceNote(const Calibration& cal, const std::string& here,
                            const std::filesystem::path& file);
nlohmann::json CalibrationJson(const Calibration& c);

struct CalibrateOptions {
  std::vector<std::string> ops;  // empty: every op
  // One curve per op and dtype ("relu", "relu@bf16"): a bf16 GEMM on a GPU is many times
  // faster than an fp32 one, not just half the bytes.
  std::vector<std::string> dtypes = {"fp32"};
  double stop_ms = 30;  // time sizes up to the first that takes this long
  double max_bytes = 1ull << 30;
  std::filesystem::path work_dir;  // probe problems are written here
  int chunk = 16;                  // probes timed per runner start
  // Curves measured before (`--resume`: a cut-off run's FILE.partial), by curve key: their
  // probes are not timed again and the curves are kept as they are.
  std::map<std::string, OpCurve> done;
  // After each chunk: the curves so far (fallbacks set), probes done, probes in all. A run cut
  // short keeps what it measured.
  std::function<void(const Calibration&, size_t, size_t)> progress;
};
// Times one single-op probe per op and dtype at doubling sizes; a probe that cannot run (the
// backend lacks the kernel) is listed in `skipped` and its fp32 curve stands in.
Result<Calibration> Calibrate(const CalibrateOptions& opt, Checker& checker);

// ---- benchmark decontamination -----------------------------------------------------------
// The op signature of a problem's source: the compute ops its Model runs, in execution order
// as far as the source shows it (calls in post-order, operators after their right operand),
// from our Python tokenizer and parser; layers built in __init__ stand where forward calls
// them; plumbing (view, permute, contiguous, ...) left out. Names are normalised
// ("nn.Conv2d", "F.conv2d" -> "conv2d"; "@", "torch.mm" -> "matmul").
std::vector<std::string> OpSignature(const std::string& source);

struct Nearest {
  std::string problem;  // relative path in the benchmark folder; "" when it is empty
  double distance = 1;
};
class BenchmarkIndex {
 public:
  // Every *.py under `dir` (recursively) that defines `class Model`.
  static Result<BenchmarkIndex> FromFolder(const std::filesystem::path& dir);
  void Add(const std::string& name, const std::string& source);
  size_t size() const { return entries_.size(); }
  // Normalised edit distance between op signatures.
  Nearest BySignature(const std::vector<std::string>& signature) const;
  // 1 - Jaccard of the Model class's normalised token 5-grams.
  Nearest BySource(const std::string& source) const;

 private:
  struct Entry {
    std::string name;
    std::vector<std::string> signature;
    std::vector<uint64_t> shingles;
  };
  std::vector<Entry> entries_;
};
// The Model class's normalised-token 5-gram set (what BySource compares).
std::vector<uint64_t> SourceShingles(const std::string& source);

// ---- synthesis ---------------------------------------------------------------------------
struct SynthOptions {
  std::filesystem::path out_dir;
  uint64_t seed = 0;
  std::vector<int> levels = {1, 2, 3};
  int count = 10;  // problems kept per level
  std::vector<std::string> dtypes = {"fp32"};
  std::vector<std::string> ops;          // empty: every op
  int variants = 2;                      // shape variants per problem
  double target_ms = 1.0;                // the reference's predicted time, main shape set
  double max_bytes = 512.0 * (1 << 20);  // inputs, intermediates and parameters, any shape set
  double min_signature_distance = 0.1;   // drop when the nearest benchmark problem is closer
  double min_source_distance = 0.1;
  int max_attempts = 0;  // drawn candidates per level before giving up; 0: 20 x count
  int batch = 16;        // candidates validated per runner start
  bool validate = true;  // false: no Python, nothing run (for quick looks; not for training)
  // After each validated batch: the level, problems kept and drawn at that level so far.
  std::function<void(int level, int kept, int drawn)> progress;
};

struct SynthReport {
  std::map<int, int> kept;             // per level
  std::map<std::string, int> dropped;  // per reason: duplicate, contaminated, invalid, no_graph
  int attempts = 0;
  std::vector<double> ratio;  // measured / target reference time, per kept problem
};

// Writes out_dir/level<L>/<n>_<ops>.py, manifest.jsonl, dropped.jsonl and timings.jsonl.
// `against` may be null (no decontamination); `checker` may be null when !opt.validate.
// The problems, manifest.jsonl and dropped.jsonl depend only on the options, the calibration,
// the benchmark folder and (through validation) the backend's torch; timings.jsonl holds what
// was measured.
Result<SynthReport> Synthesize(const SynthOptions& opt, const Calibration& cal,
                               const BenchmarkIndex* against, Checker* checker);

}  // namespace kf::synth
