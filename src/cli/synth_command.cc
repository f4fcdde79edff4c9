// kforge synth: new KernelBench-format problems from random operator graphs (src/synth), and
// the calibration of its cost model on a backend (--calibrate).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>

#include "backend/backend.h"
#include "cli/commands.h"
#include "eval/eval.h"
#include "synth/synth.h"

namespace kf::cli {
namespace {
namespace fs = std::filesystem;

struct SynthFlags {
  SynthFlags() { opt.dtypes.clear(); }  // empty: the backend's default (RunSynth)
  synth::SynthOptions opt;
  std::string out, against, calibration, calibrate, backend, python;
  double max_mib = 512, stop_ms = 30;
  int draws = 3;
  int problem_timeout_s = 0;  // 0: 60 s a problem's checks, 600 s a calibration probe's times
  bool no_validate = false, force = false, list_ops = false, resume = false;
};

// Debian's CPU torch has no fp16 kernels for most ops: fp16 problems validate on CUDA.
std::vector<std::string> DefaultDtypes(const std::string& backend) {
  if (backend == "cuda") return {"fp32", "bf16", "fp16"};
  return {"fp32", "bf16"};
}

int ListOps() {
  for (const auto& op : synth::ListOps()) {
    std::string ranks, dtypes;
    for (int r : op.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    for (const auto& d : op.dtypes) dtypes += (dtypes.empty() ? "" : ",") + d;
    std::cout << op.name << "\t" << op.category << (op.heavy ? " (anchor)" : "") << "\tranks "
              << ranks << "\t" << dtypes << "\n";
  }
  return kExitOk;
}

// Removes what an earlier synth run wrote to `dir`; false when other files are there too.
bool ClearOutputs(const fs::path& dir) {
  std::error_code ec;
  for (const char* name : {"level1", "level2", "level3", ".staging", "manifest.jsonl",
                           "dropped.jsonl", "timings.jsonl"}) {
    fs::remove_all(dir / name, ec);
  }
  return !fs::exists(dir, ec) || fs::is_empty(dir, ec);
}

std::unique_ptr<synth::Checker> MakeChecker(const SynthFlags& f, const std::string& backend,
                                            int default_problem_timeout_s) {
  synth::PythonCheckerOptions p;
  p.python = f.python.empty() ? eval::DefaultPython() : f.python;
  p.runner_dir = eval::FindRunnerDir();
  p.device = backend;
  p.draws = f.draws;
  p.problem_timeout_s = f.problem_timeout_s > 0 ? f.problem_timeout_s : default_problem_timeout_s;
  return synth::MakePythonChecker(p);
}

// One line per curve: readable, and a recalibration diffs by op.
bool WriteCalibration(const fs::path& file, const synth::Calibration& cal) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  auto j = synth::CalibrationJson(cal);
  auto ops = j["ops"];
  j.erase("ops");
  std::string head = j.dump();
  out << head.substr(0, head.size() - 1) << ",\n\"ops\": {\n";
  size_t i = 0;
  for (const auto& [name, points] : ops.items()) {
    out << "  " << nlohmann::json(name).dump() << ": " << points.dump()
        << (++i < ops.size() ? ",\n" : "\n");
  }
  out << "}}\n";
  return static_cast<bool>(out);
}

int RunCalibrate(const SynthFlags& f, const std::string& backend) {
  auto checker = MakeChecker(f, backend, 600);  // a probe times many sizes
  synth::CalibrateOptions c;
  c.ops = f.opt.ops;
  c.dtypes = f.opt.dtypes.empty() ? DefaultDtypes(backend) : f.opt.dtypes;
  c.stop_ms = f.stop_ms;
  c.max_bytes = f.max_mib * (1 << 20);
  c.chunk = f.opt.batch;
  c.work_dir = fs::temp_directory_path() / ("kforge-calibrate-" + std::to_string(getpid()));
  std::string device;
  if (const backend::Device* d = backend::FindDevice(backend)) device = backend::DeviceModel(*d);
  // What is measured so far, after every chunk of probes: a run cut short (a time limit, a
  // crash) leaves FILE.partial, never a FILE that looks whole.
  const fs::path partial = f.calibrate + ".partial";
  if (f.resume) {  // the curves a cut-off run kept, if it ran on this device
    std::error_code exists_ec;
    if (!fs::exists(partial, exists_ec)) {
      std::cerr << "kforge synth --calibrate: no " << partial.string()
                << " to resume; timing every probe\n";
    } else {
      auto before = synth::LoadCalibration(partial);
      if (!before.ok()) {
        std::cerr << "kforge synth --calibrate: cannot resume from " << partial.string() << ": "
                  << before.status().message() << "\n";
        return kExitUsage;
      }
      if (before->backend != backend || before->device != device) {
        std::cerr << "kforge synth --calibrate: " << partial.string() << " was measured on "
                  << before->device << " (" << before->backend << "), not on " << device << " ("
                  << backend << "); remove it, or calibrate without --resume\n";
        return kExitUsage;
      }
      c.done = before->ops;
      std::cerr << "kforge synth --calibrate: resuming with the " << c.done.size()
                << " curves of " << partial.string() << "\n";
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  c.progress = [&](const synth::Calibration& so_far, size_t done, size_t total) {
    synth::Calibration cal = so_far;
    cal.backend = backend;
    cal.device = device;
    const bool wrote = WriteCalibration(partial, cal);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << "kforge synth --calibrate: " << done << " of " << total << " probes timed in "
              << static_cast<int>(s) << " s"
              << (wrote ? "; so far in " + partial.string() : "; cannot write " + partial.string())
              << "\n";
  };
  auto cal = synth::Calibrate(c, *checker);
  std::error_code ec;
  fs::remove_all(c.work_dir, ec);
  if (!cal.ok()) {
    std::cerr << "kforge synth --calibrate: " << cal.status().message() << "\n";
    return cal.status().code() == Code::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  cal->backend = backend;
  cal->device = device;
  if (!WriteCalibration(f.calibrate, *cal)) {
    std::cerr << "kforge synth --calibrate: cannot write " << f.calibrate << "\n";
    return kExitInfra;
  }
  fs::remove(partial, ec);
  std::cout << "calibrated " << cal->ops.size() << " curves (ops x dtypes) on " << backend << " ("
            << cal->device << "): " << f.calibrate << "\n";
  for (const auto& key : cal->skipped) {
    std::cout << "  " << key << ": its probe did not run (see above); the op's fp32 curve, else "
              << "relu's or matmul's, stands in\n";
  }
  return kExitOk;
}

std::string Quantile(std::vector<double> v, double q) {
  if (v.empty()) return "n/a";
  std::sort(v.begin(), v.end());
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx",
                v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))]);
  return buf;
}

int RunSynth(SynthFlags f) {
  if (f.list_ops) return ListOps();
  std::string backend = f.backend.empty() ? backend::DefaultBackend() : f.backend;
  if (!f.calibrate.empty()) return RunCalibrate(f, backend);
  if (f.out.empty()) {
    std::cerr << "kforge synth: --out is required\n";
    return kExitUsage;
  }
  f.opt.out_dir = f.out;
  f.opt.max_bytes = f.max_mib * (1 << 20);
  f.opt.validate = !f.no_validate;
  if (f.opt.dtypes.empty()) f.opt.dtypes = DefaultDtypes(backend);
  fs::path cal_path = f.calibration.empty()
                          ? eval::FindRunnerDir() / "calibration" / (backend + ".json")
                          : fs::path(f.calibration);
  auto cal = synth::LoadCalibration(cal_path);
  if (!cal.ok()) {
    std::cerr << "kforge synth: " << cal.status().message() << "\n  measure one on this machine: "
              << "kforge synth --calibrate " << cal_path.string() << " --backend " << backend
              << "\n";
    return kExitUsage;
  }
  // GPUs differ by several times: a cost model of another card sizes problems for that card.
  if (const backend::Device* d = backend::FindDevice(backend); d && d->indexed) {
    std::string here = backend::DeviceModel(*d);
    if (here == backend::kUnknownGpu) here.clear();
    const std::string note = synth::OtherDeviceNote(*cal, here, cal_path);
    if (!note.empty()) std::cerr << note << "\n";
  }
  std::unique_ptr<synth::BenchmarkIndex> against;
  if (!f.against.empty()) {
    auto idx = synth::BenchmarkIndex::FromFolder(f.against);
    if (!idx.ok()) {
      std::cerr << "kforge synth: " << idx.status().message() << "\n";
      return kExitUsage;
    }
    against = std::make_unique<synth::BenchmarkIndex>(std::move(*idx));
  }
  if (f.force && !ClearOutputs(f.out)) {
    std::cerr << "kforge synth: " << f.out << " holds files synth did not write; not touching it\n";
    return kExitUsage;
  }
  auto checker = f.opt.validate ? MakeChecker(f, backend, 60) : nullptr;
  synth::SynthOptions opt = f.opt;
  const auto t0 = std::chrono::steady_clock::now();
  opt.progress = [&](int level, int kept, int drawn) {  // a long run's log shows where it is
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << "kforge synth: level" << level << ": " << kept << " of " << opt.count << " kept, "
              << drawn << " drawn (" << static_cast<int>(s) << " s)" << std::endl;
  };
  auto report = synth::Synthesize(opt, *cal, against.get(), checker.get());
  if (!report.ok()) {
    std::cerr << "kforge synth: " << report.status().message() << "\n";
    return report.status().code() == Code::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  bool short_of = false;
  for (const auto& [level, n] : report->kept) {
    std::cout << "level" << level << ": " << n << " of " << f.opt.count << " problems\n";
    short_of = short_of || n < f.opt.count;
  }
  std::cout << "dropped:";
  if (report->dropped.empty()) std::cout << " none";
  for (const auto& [reason, n] : report->dropped) std::cout << " " << reason << " " << n;
  std::cout << " (" << report->attempts << " candidates drawn)\n";
  if (!report->ratio.empty()) {
    std::cout << "reference time on " << backend << " / target " << f.opt.target_ms
              << " ms: median " << Quantile(report->ratio, 0.5) << ", p10 "
              << Quantile(report->ratio, 0.1) << ", p90 " << Quantile(report->ratio, 0.9) << "\n";
  }
  std::cout << "wrote " << (fs::path(f.out) / "manifest.jsonl").string() << "\n";
  return short_of ? 1 : kExitOk;
}

}  // namespace

Command SynthCommand() {
  return {
      "synth", "Synthesize KernelBench-format problems from random operator graphs",
      [](CLI::App* app) -> std::function<int()> {
        auto f = std::make_shared<SynthFlags>();
        auto& o = f->opt;
        app->add_option("--out", f->out, "output folder (level1..3, manifest.jsonl)");
        app->add_option("--seed", o.seed, "the same seed writes the same problems");
        app->add_option("--levels", o.levels, "levels to make (1,2,3)")->delimiter(',');
        app->add_option("--count", o.count, "problems kept per level")->check(CLI::PositiveNumber);
        app->add_option("--dtypes", o.dtypes,
                        "fp32,bf16,fp16 (default: all three on cuda, fp32,bf16 on cpu)")
            ->delimiter(',');
        app->add_option("--ops", o.ops, "only these ops (kforge synth --list-ops)")->delimiter(',');
        app->add_option("--variants", o.variants, "shape variants per problem");
        app->add_option("--target-ms", o.target_ms, "the reference's predicted time");
        app->add_option("--max-mib", f->max_mib, "memory bound of any shape set, MiB");
        app->add_option("--against", f->against, "benchmark folder to decontaminate against");
        app->add_option("--min-signature-distance", o.min_signature_distance,
                        "drop when the nearest benchmark op signature is closer");
        app->add_option("--min-source-distance", o.min_source_distance,
                        "drop when the nearest benchmark source is closer");
        app->add_option("--calibration", f->calibration,
                        "cost-model file (default runner/calibration/<backend>.json)");
        app->add_option("--calibrate", f->calibrate, "measure the cost model into FILE, exit");
        app->add_option("--stop-ms", f->stop_ms, "calibration: largest probe time");
        app->add_flag("--resume", f->resume,
                      "calibration: keep the curves of FILE.partial (a run cut off on this "
                      "device) and time only the probes it lacks");
        app->add_option("--backend", f->backend, "cuda or cpu")
            ->check(CLI::IsMember({"cuda", "cpu"}));
        app->add_option("--python", f->python, "Python interpreter with PyTorch");
        app->add_option("--draws", f->draws, "the linter's input draws")->check(CLI::Range(1, 20));
        app->add_option("--problem-timeout-s", f->problem_timeout_s,
                        "drop a problem whose checks take longer than this, as check_timeout "
                        "(default 60; calibrating, a probe whose times take longer is skipped, "
                        "default 600)")
            ->check(CLI::PositiveNumber);
        app->add_option("--max-attempts", o.max_attempts, "candidates per level (0: 20 x count)");
        app->add_option("--batch", o.batch,
                        "candidates validated (calibration: probes timed) per runner start");
        app->add_flag("--no-validate", f->no_validate, "run nothing (problems unchecked)");
        app->add_flag("--force", f->force, "replace an earlier synth run's files in --out");
        app->add_flag("--list-ops", f->list_ops, "print the op table and exit");
        return [f] { return RunSynth(*f); };
      }};
}

}  // namespace kf::cli
