// kforge bench: every sample of a model for a set of problems, through the pipeline; prints the
// metrics table and writes results.json, report.md, report.html and verdicts.jsonl.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "backend/backend.h"
#include "bench/discover.h"
#include "bench/metrics.h"
#include "bench/progress.h"
#include "bench/record.h"
#include "bench/report.h"
#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/eval_flags.h"
#include "common/files.h"
#include "common/hash.h"
#include "eval/eval.h"
#include "pipeline/pipeline.h"

namespace kf::cli {
namespace {
namespace fs = std::filesystem;

struct BenchFlags {
  std::vector<std::string> problems;
  std::string samples;
  std::string out = "results";
  std::string model;  // "": the samples folder's name
  int k = 1;
  int build_threads = 0;
  size_t queue = 0;
  bool sequential = false;
  bool no_warm_lanes = false;
  bool no_reuse = false;
  double progress_interval_s = 0;
  double time_limit_s = 0;  // 0: none
  EvalFlags eval;
};

std::string NowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Prints the progress line while the bench runs: rewritten in place on a terminal, a plain
// line every `interval_s` otherwise (logs of batch jobs).
class Ticker {
 public:
  Ticker(std::function<std::string()> line, double interval_s)
      : line_(std::move(line)), tty_(isatty(STDERR_FILENO)) {
    interval_ = std::chrono::duration<double>(interval_s > 0 ? interval_s : (tty_ ? 0.5 : 30));
    thread_ = std::thread([this] { Loop(); });
  }
  ~Ticker() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    Print();
    if (tty_) std::cerr << "\n";
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lk(mu_);
    while (!cv_.wait_for(lk, interval_, [this] { return stop_; })) Print();
  }
  void Print() {
    if (tty_) {
      std::cerr << "\r\x1b[K" << line_() << std::flush;
    } else {
      std::cerr << "kforge bench: " << line_() << std::endl;
    }
  }
  std::function<std::string()> line_;
  bool tty_;
  std::chrono::duration<double> interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Records the run in the store (the run, its samples and the texts they refer to) for the web
// UI. The texts are read again from the files (not kept in memory during the run) and kept
// only when they still hash to what was evaluated. A failure is a warning: the reports are
// written and the verdicts stored already.
void RecordInStore(const fs::path& cache_dir, eval::Evaluator* ev, const bench::Metrics& m,
                   const bench::RunInfo& info, const std::vector<bench::SampleRecord>& done) {
  if (done.empty()) return;  // nothing was evaluated: no run to browse
  const fs::path db = cache_dir / "kforge.db";
  auto st = store::Store::Open(db);
  Status s = st.ok() ? Status::Ok() : st.status();
  std::vector<store::RunSampleRow> rows;
  std::set<std::string> seen;
  std::map<std::string, std::string> texts;
  auto keep = [&](const std::string& hash, const fs::path& path) {
    if (!seen.insert(hash).second) return;
    auto text = ReadFile(path);
    if (text.ok() && Sha256Hex(*text) == hash) texts.emplace(hash, std::move(*text));
  };
  for (size_t i = 0; i < done.size() && s.ok(); ++i) {
    const bench::SampleRecord& r = done[i];
    rows.push_back(
        bench::SampleRowOf(r, ev->StoreKey(r.verdict.problem_hash, r.verdict.candidate_hash)));
    keep(r.verdict.candidate_hash, r.sample_path);
    keep(r.verdict.problem_hash, r.problem_path);
    if (texts.size() >= 256 || i + 1 == done.size()) {  // bounded memory for big runs
      s = (*st)->PutTexts(texts);
      texts.clear();
    }
  }
  Result<int64_t> id = s.ok() ? (*st)->RecordRun(bench::RunRowOf(m, info), rows) : s;
  if (!id.ok()) {
    std::cerr << "kforge bench: warning: the run was not recorded in " << db.string()
              << " (the web UI will not list it): " << id.status().message() << "\n";
    return;
  }
  std::cout << "recorded as run " << *id << " (model " << info.model << ") in " << db.string()
            << "; browse with kforge ui --cache " << cache_dir.string() << "\n";
}

int RunBench(const BenchFlags& f) {
  std::vector<fs::path> roots(f.problems.begin(), f.problems.end());
  auto problems = bench::FindProblems(roots);
  if (!problems.ok()) {
    std::cerr << "kforge bench: " << problems.status().message() << "\n";
    return kExitUsage;
  }
  if (!fs::is_directory(f.samples)) {
    std::cerr << "kforge bench: no such samples folder: " << f.samples << "\n";
    return kExitUsage;
  }
  bench::Discovery d = bench::MatchSamples(std::move(*problems), f.samples);
  for (const auto& w : d.warnings) std::cerr << "kforge bench: warning: " << w << "\n";
  if (d.samples.empty()) {
    std::cerr << "kforge bench: no samples under " << f.samples << " match the "
              << d.problems.size() << " problems\n";
    return kExitUsage;
  }
  std::vector<size_t> per_problem(d.problems.size(), 0);
  for (const auto& s : d.samples) ++per_problem[s.problem];
  for (size_t i = 0; i < d.problems.size(); ++i) {
    if (per_problem[i] == 0) {
      d.warnings.push_back("no samples for " + d.problems[i].path.string() + " (left out)");
      std::cerr << "kforge bench: warning: " << d.warnings.back() << "\n";
    }
  }

  eval::EvalOptions opt = ToEvalOptions(f.eval);
  auto ev = eval::Evaluator::Create(opt);
  if (!ev.ok()) {
    std::cerr << "kforge bench: " << ev.status().message() << "\n";
    return kExitInfra;
  }

  bench::RunInfo info;
  info.started_at = NowUtc();
  info.model = f.model.empty() ? bench::DefaultModelName(f.samples) : f.model;
  info.backend = opt.backend;
  info.policy = execute::PolicyName(opt.exec.policy);
  info.problem_roots = f.problems;
  info.samples_root = f.samples;
  info.lanes = (*ev)->lanes();
  info.sequential = f.sequential;
  info.baselines = opt.baselines;
  info.warnings = d.warnings;

  pipeline::PipelineOptions po;
  po.build_threads = f.build_threads > 0 ? f.build_threads : Cores();
  po.queue_capacity =
      f.queue > 0 ? f.queue : static_cast<size_t>(4 * (po.build_threads + info.lanes));
  po.reuse_stored = !f.no_reuse;
  po.sequential = f.sequential;
  po.warm_lanes = !f.no_warm_lanes;
  info.build_threads = f.sequential ? 1 : po.build_threads;

  std::vector<bench::SampleRecord> records(d.samples.size());
  std::vector<bool> have(d.samples.size(), false);
  std::mutex mu;  // guards records, have, progress
  bench::Progress progress;
  progress.total = d.samples.size();
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed_s = [t0] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const std::atomic<bool>& signalled = StopOnSignals();
  // Each verdict as it arrives, so a run that is killed outright (an outer timeout, a lost
  // machine) still leaves what it learned beside the store; the full reports replace it.
  std::error_code mk;
  fs::create_directories(f.out, mk);
  const fs::path partial_path = fs::path(f.out) / "verdicts.partial.jsonl";
  std::ofstream partial(partial_path, std::ios::trunc);
  {
    pipeline::Pipeline pl(ev->get(), po);
    // A time limit or ^C stops the run early: what is running finishes, what waits is left for
    // a rerun (not stored), and the reports cover what was done.
    std::atomic<bool> finished{false};
    bench::Timeline timeline(info.lanes);
    auto observe = [&] {
      const double s = elapsed_s();
      pipeline::Stats st = pl.stats();
      std::lock_guard<std::mutex> g(mu);
      timeline.Add({s, progress.done, st.executing + st.warming, st.intake_depth, st.building});
    };
    std::thread stopper([&] {
      bool cancelled = false;  // then only the timeline is kept, while running evaluations end
      while (!finished.load()) {
        observe();
        const double s = elapsed_s();
        const bool late = f.time_limit_s > 0 && s >= f.time_limit_s;
        if (!cancelled && (late || signalled.load())) {
          {
            std::lock_guard<std::mutex> g(mu);
            info.stopped =
                late ? "the time limit of " + bench::Duration(f.time_limit_s) : "a signal";
          }
          std::cerr << "\nkforge bench: stopping (" << info.stopped
                    << "): running evaluations finish, the rest is left for a rerun\n";
          pl.Cancel();
          cancelled = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
    Ticker ticker(
        [&] {
          std::lock_guard<std::mutex> g(mu);
          double s = elapsed_s();
          return bench::ProgressLine(progress, s);
        },
        f.progress_interval_s);
    for (size_t i = 0; i < d.samples.size(); ++i) {
      const bench::SampleFile& sf = d.samples[i];
      const bench::ProblemFile& pf = d.problems[sf.problem];
      bench::SampleRecord& r = records[i];
      r.level = pf.level;
      r.problem = pf.stem;
      r.problem_path = pf.path;
      r.sample_path = sf.path;
      r.index = sf.index;
      auto text = ReadFile(sf.path);
      if (!text.ok()) {
        std::cerr << "kforge bench: warning: cannot read " << sf.path << "; skipped\n";
        std::lock_guard<std::mutex> g(mu);
        --progress.total;
        continue;
      }
      pl.Submit({pf.path, std::move(*text)}, [&, i](const Verdict& v, pipeline::Outcome how) {
        const bool from_store = how == pipeline::Outcome::kFromStore;
        std::lock_guard<std::mutex> g(mu);
        records[i].verdict = v;
        records[i].from_store = from_store;
        have[i] = true;
        if (!pipeline::IsCancelled(v)) partial << bench::RecordJson(records[i]).dump() << std::endl;
        ++progress.done;
        progress.reused += from_store ? 1 : 0;
        ++progress.by_status[StatusName(v.status)];
      });
    }
    pl.Close();
    finished = true;
    stopper.join();
    observe();
    info.timeline = timeline;
    pipeline::Stats st = pl.stats();
    info.evaluated = st.evaluated;
    info.reused = st.from_store;
    info.deduplicated = st.deduplicated;
    info.wall_ms = st.wall_ms;
    info.build_busy_ms = st.build_busy_ms;
    info.lane_busy_ms = st.lane_busy_ms;
    info.warm_ms = st.warm_ms;
    info.warmed = st.warmed;
    info.retried = st.retried;
  }

  std::vector<bench::SampleRecord> done;
  std::vector<bench::Sample> samples;
  std::set<std::string> counted;  // identical samples share one evaluation: count its build once
  for (size_t i = 0; i < records.size(); ++i) {
    if (!have[i]) continue;
    const Verdict& v = records[i].verdict;
    if (pipeline::IsCancelled(v)) {
      ++info.not_evaluated;
      continue;
    }
    if (info.device.empty()) info.device = v.device;
    if (!records[i].from_store && counted.insert(v.problem_hash + v.candidate_hash).second) {
      for (const auto& st : v.stages) {
        if (st.name != "build") continue;
        info.build_cpu_ms += st.detail.value("cpu_ms", 0.0);
        info.compiled += st.detail.value("compiled", 0);
        info.compiled_with_pch += st.detail.value("compiled_with_pch", 0);
        info.compiled_light += st.detail.value("compiled_light", 0);
        info.compiled_light_fell_back += st.detail.value("compiled_light_fell_back", 0);
      }
    }
    samples.push_back({records[i].level, records[i].problem, v.status, v.speedup_vs_eager,
                       v.speedup_vs_compile,
                       v.candidate_format == backend::CandidateFormat(backend::Family::kTriton)
                           ? backend::FamilyName(backend::Family::kTriton)
                           : backend::FamilyName(backend::Family::kLoadInline)});
    if (v.speedup_vs_eager_ci) samples.back().speedup_vs_eager_lo = v.speedup_vs_eager_ci->lo;
    if (v.speedup_vs_compile_ci) samples.back().speedup_vs_compile_lo = v.speedup_vs_compile_ci->lo;
    done.push_back(std::move(records[i]));
  }
  info.samples = done.size();
  bench::Metrics m =
      bench::Compute(samples, {.k = f.k, .significance = !f.eval.no_significance});
  std::cout << bench::RenderText(bench::SummaryTable(m));
  std::cout << "samples " << info.samples << ": evaluated " << info.evaluated << ", reused "
            << info.reused << ", identical " << info.deduplicated
            << (info.retried ? ", timed again " + std::to_string(info.retried) : "") << "; wall "
            << bench::Duration(info.wall_ms / 1000) << "\n";
  if (!info.stopped.empty()) {
    std::cout << "stopped early (" << info.stopped << "): " << info.not_evaluated
              << " samples not evaluated; run the same command again to finish\n";
  }
  Status ws = bench::WriteOutputs(f.out, m, info, done);
  if (!ws.ok()) {
    std::cerr << "kforge bench: " << ws.message() << "\n";
    return kExitInfra;
  }
  partial.close();
  fs::remove(partial_path, mk);
  std::cout << "wrote " << (fs::path(f.out) / "results.json").string() << ", report.md, "
            << "report.html, verdicts.jsonl\n";
  RecordInStore(opt.cache_dir, ev->get(), m, info, done);
  if (m.overall.infra_errors > 0) {
    std::cerr << "kforge bench: warning: " << m.overall.infra_errors
              << " samples ended as infra_error (not counted; a rerun tries them again)\n";
  }
  // Nothing counted because every evaluated sample was infra_error: kforge could not work. A
  // run stopped early (its time limit, ^C) that finished none of them is not that: it says so
  // above, and the same command again finishes it.
  return m.overall.samples == 0 && info.stopped.empty() ? kExitInfra : kExitOk;
}

}  // namespace

Command BenchCommand() {
  return {
      "bench", "Evaluate every sample of a model for a set of problems; print Pass@k, fast_p, ...",
      [](CLI::App* app) -> std::function<int()> {
        auto f = std::make_shared<BenchFlags>();
        app->add_option("--problems", f->problems,
                        "a folder of KernelBench-format problems (its name is the level); "
                        "repeat for several")
            ->required();
        app->add_option("--samples", f->samples,
                        "samples: <level>/<problem>/sample_<i>.* or KernelBench's "
                        "level_<L>_problem_<P>_sample_<S>_kernel.py")
            ->required();
        app->add_option("--out", f->out, "where the reports go (default: results)");
        app->add_option("--model", f->model,
                        "the model the samples came from, recorded with the run in the store "
                        "for the web UI (default: the samples folder's name)");
        app->add_option("--k", f->k, "k of Pass@k and Avg@k (default 1)")
            ->check(CLI::Range(1, 100000));
        app->add_option("--build-threads", f->build_threads,
                        "threads of the build stage (default: one per core)");
        app->add_option("--queue", f->queue,
                        "bound of the pipeline's queues (default 4 x threads)");
        app->add_flag("--sequential", f->sequential,
                      "one candidate at a time, build then execute (for comparison)");
        app->add_flag("--no-warm-lanes", f->no_warm_lanes,
                      "lanes wait for built candidates instead of loading problems and timing "
                      "baselines ahead (for comparison)");
        app->add_flag("--no-reuse", f->no_reuse, "evaluate again even when a verdict is stored");
        AddEvalFlags(app, &f->eval, Lanes::kMany);
        AddTrialSeedFlag(app, &f->eval);
        app->add_option("--time-limit-s", f->time_limit_s,
                        "stop after this many seconds: running evaluations finish, the rest "
                        "is left for a rerun (stored verdicts make it resume); also on ^C")
            ->check(CLI::NonNegativeNumber);
        app->add_option("--progress-interval-s", f->progress_interval_s,
                        "seconds between progress lines (default 0.5 on a terminal, else 30)");
        return [f] { return RunBench(*f); };
      }};
}

}  // namespace kf::cli
