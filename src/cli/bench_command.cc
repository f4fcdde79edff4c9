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

// The problems under --problems and the samples under --samples that match them; warnings
// (unmatched files, problems with no samples) are printed as they are found and kept for the
// report. An error is a usage error: nothing to evaluate.
Result<bench::Discovery> DiscoverBench(const BenchFlags& f) {
  std::vector<fs::path> roots(f.problems.begin(), f.problems.end());
  auto problems = bench::FindProblems(roots);
  if (!problems.ok()) return problems.status();
  if (!fs::is_directory(f.samples)) {
    return Status::Invalid("no such samples folder: " + f.samples);
  }
  bench::Discovery d = bench::MatchSamples(std::move(*problems), f.samples);
  for (const auto& w : d.warnings) std::cerr << "kforge bench: warning: " << w << "\n";
  if (d.samples.empty()) {
    return Status::Invalid("no samples under " + f.samples + " match the " +
                           std::to_string(d.problems.size()) + " problems");
  }
  std::vector<size_t> per_problem(d.problems.size(), 0);
  for (const auto& s : d.samples) ++per_problem[s.problem];
  for (size_t i = 0; i < d.problems.size(); ++i) {
    if (per_problem[i] == 0) {
      d.warnings.push_back("no samples for " + d.problems[i].path.string() + " (left out)");
      std::cerr << "kforge bench: warning: " << d.warnings.back() << "\n";
    }
  }
  return d;
}

// What the report says about the run before it starts.
bench::RunInfo BenchRunInfo(const BenchFlags& f, const eval::EvalOptions& opt, int lanes,
                            const std::vector<std::string>& warnings) {
  bench::RunInfo info;
  info.started_at = NowUtc();
  info.model = f.model.empty() ? bench::DefaultModelName(f.samples) : f.model;
  info.backend = opt.backend;
  info.policy = execute::PolicyName(opt.exec.policy);
  info.problem_roots = f.problems;
  info.samples_root = f.samples;
  info.lanes = lanes;
  info.sequential = f.sequential;
  info.baselines = opt.baselines;
  info.warnings = warnings;
  return info;
}

pipeline::PipelineOptions BenchPipelineOptions(const BenchFlags& f, int lanes) {
  pipeline::PipelineOptions po;
  po.build_threads = f.build_threads > 0 ? f.build_threads : Cores();
  po.queue_capacity = f.queue > 0 ? f.queue : static_cast<size_t>(4 * (po.build_threads + lanes));
  po.reuse_stored = !f.no_reuse;
  po.sequential = f.sequential;
  po.warm_lanes = !f.no_warm_lanes;
  return po;
}

// What the pipeline's callbacks, the stop watcher and the progress line share while the bench
// runs. `mu` guards every field after it, and the writes to the partial verdicts file.
struct BenchState {
  BenchState(size_t samples, int lanes) : records(samples), have(samples, false), timeline(lanes) {
    progress.total = samples;
  }
  double ElapsedS() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  const std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::mutex mu;
  std::vector<bench::SampleRecord> records;  // one per discovered sample
  std::vector<bool> have;                    // records[i] has its verdict
  bench::Progress progress;
  bench::Timeline timeline;
  std::string stopped;  // why the run stopped early (RunInfo::stopped); "" while it did not
};

void ObserveTimeline(const pipeline::Pipeline& pl, BenchState* st) {
  const double s = st->ElapsedS();
  pipeline::Stats ps = pl.stats();
  std::lock_guard<std::mutex> g(st->mu);
  st->timeline.Add({s, st->progress.done, ps.executing + ps.warming, ps.intake_depth, ps.building});
}

// Until `finished`: samples the timeline, and cancels the pipeline once, when the time limit
// has passed or a signal came. After that only the timeline is kept while running
// evaluations end.
void WatchBench(const std::atomic<bool>& finished, const std::atomic<bool>& signalled,
                double time_limit_s, pipeline::Pipeline* pl, BenchState* st) {
  bool cancelled = false;
  while (!finished.load()) {
    ObserveTimeline(*pl, st);
    const double s = st->ElapsedS();
    const bool late = time_limit_s > 0 && s >= time_limit_s;
    if (!cancelled && (late || signalled.load())) {
      std::string why = late ? "the time limit of " + bench::Duration(time_limit_s) : "a signal";
      {
        std::lock_guard<std::mutex> g(st->mu);
        st->stopped = why;
      }
      std::cerr << "\nkforge bench: stopping (" << why
                << "): running evaluations finish, the rest is left for a rerun\n";
      pl->Cancel();
      cancelled = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Submits every sample; each verdict lands in its record, the progress counts and (unless the
// run was cancelled before it ran) a line of `partial`. A sample that cannot be read is skipped.
void SubmitSamples(const bench::Discovery& d, pipeline::Pipeline* pl, BenchState* st,
                   std::ostream* partial) {
  for (size_t i = 0; i < d.samples.size(); ++i) {
    const bench::SampleFile& sf = d.samples[i];
    const bench::ProblemFile& pf = d.problems[sf.problem];
    bench::SampleRecord& r = st->records[i];
    r.level = pf.level;
    r.problem = pf.stem;
    r.problem_path = pf.path;
    r.sample_path = sf.path;
    r.index = sf.index;
    auto text = ReadFile(sf.path);
    if (!text.ok()) {
      std::cerr << "kforge bench: warning: cannot read " << sf.path << "; skipped\n";
      std::lock_guard<std::mutex> g(st->mu);
      --st->progress.total;
      continue;
    }
    pl->Submit({pf.path, std::move(*text)},
               [st, partial, i](const Verdict& v, pipeline::Outcome how) {
                 const bool from_store = how == pipeline::Outcome::kFromStore;
                 std::lock_guard<std::mutex> g(st->mu);
                 st->records[i].verdict = v;
                 st->records[i].from_store = from_store;
                 st->have[i] = true;
                 if (!pipeline::IsCancelled(v))
                   *partial << bench::RecordJson(st->records[i]).dump() << std::endl;
                 ++st->progress.done;
                 st->progress.reused += from_store ? 1 : 0;
                 ++st->progress.by_status[StatusName(v.status)];
               });
  }
}

void CopyPipelineStats(const pipeline::Stats& st, bench::RunInfo* info) {
  info->evaluated = st.evaluated;
  info->reused = st.from_store;
  info->deduplicated = st.deduplicated;
  info->wall_ms = st.wall_ms;
  info->build_busy_ms = st.build_busy_ms;
  info->lane_busy_ms = st.lane_busy_ms;
  info->warm_ms = st.warm_ms;
  info->warmed = st.warmed;
  info->retried = st.retried;
}

// Runs every sample through the pipeline, with a progress line and the stop watcher. A time
// limit or ^C stops the run early: what is running finishes, what waits is left for a rerun
// (not stored), and the reports cover what was done. Fills `info`'s pipeline counts, timeline
// and `stopped`.
void EvaluateSamples(const BenchFlags& f, const bench::Discovery& d, eval::Evaluator* ev,
                     const pipeline::PipelineOptions& po, const std::atomic<bool>& signalled,
                     BenchState* st, std::ostream* partial, bench::RunInfo* info) {
  pipeline::Pipeline pl(ev, po);
  std::atomic<bool> finished{false};
  std::thread stopper([&] { WatchBench(finished, signalled, f.time_limit_s, &pl, st); });
  Ticker ticker(
      [st] {
        std::lock_guard<std::mutex> g(st->mu);
        double s = st->ElapsedS();
        return bench::ProgressLine(st->progress, s);
      },
      f.progress_interval_s);
  SubmitSamples(d, &pl, st, partial);
  pl.Close();
  finished = true;
  stopper.join();
  ObserveTimeline(pl, st);
  info->timeline = st->timeline;
  info->stopped = st->stopped;
  CopyPipelineStats(pl.stats(), info);
}

// Adds the build stage's CPU time and compile counts of one evaluation to the run's totals.
void AddBuildCounts(const Verdict& v, bench::RunInfo* info) {
  for (const auto& st : v.stages) {
    if (st.name != "build") continue;
    info->build_cpu_ms += st.detail.value("cpu_ms", 0.0);
    info->compiled += st.detail.value("compiled", 0);
    info->compiled_with_pch += st.detail.value("compiled_with_pch", 0);
    info->compiled_light += st.detail.value("compiled_light", 0);
    info->compiled_light_fell_back += st.detail.value("compiled_light_fell_back", 0);
    info->compiled_split += st.detail.value("compiled_split", 0);
  }
}

bench::Sample MetricSampleOf(const bench::SampleRecord& r) {
  const Verdict& v = r.verdict;
  bench::Sample s{r.level,
                  r.problem,
                  v.status,
                  v.speedup_vs_eager,
                  v.speedup_vs_compile,
                  v.candidate_format == backend::CandidateFormat(backend::Family::kTriton)
                      ? backend::FamilyName(backend::Family::kTriton)
                      : backend::FamilyName(backend::Family::kLoadInline)};
  if (v.speedup_vs_eager_ci) s.speedup_vs_eager_lo = v.speedup_vs_eager_ci->lo;
  if (v.speedup_vs_compile_ci) s.speedup_vs_compile_lo = v.speedup_vs_compile_ci->lo;
  return s;
}

// Moves the records with a verdict into `done` (those the run cancelled only count as not
// evaluated) and returns what the metrics are computed over.
std::vector<bench::Sample> CollectDone(std::vector<bench::SampleRecord>* records,
                                       const std::vector<bool>& have, bench::RunInfo* info,
                                       std::vector<bench::SampleRecord>* done) {
  std::vector<bench::Sample> samples;
  std::set<std::string> counted;  // identical samples share one evaluation: count its build once
  for (size_t i = 0; i < records->size(); ++i) {
    if (!have[i]) continue;
    bench::SampleRecord& r = (*records)[i];
    const Verdict& v = r.verdict;
    if (pipeline::IsCancelled(v)) {
      ++info->not_evaluated;
      continue;
    }
    if (info->device.empty()) info->device = v.device;
    if (!r.from_store && counted.insert(v.problem_hash + v.candidate_hash).second) {
      AddBuildCounts(v, info);
    }
    samples.push_back(MetricSampleOf(r));
    done->push_back(std::move(r));
  }
  info->samples = done->size();
  return samples;
}

void PrintBenchSummary(const bench::Metrics& m, const bench::RunInfo& info) {
  std::cout << bench::RenderText(bench::SummaryTable(m));
  std::cout << "samples " << info.samples << ": evaluated " << info.evaluated << ", reused "
            << info.reused << ", identical " << info.deduplicated
            << (info.retried ? ", timed again " + std::to_string(info.retried) : "") << "; wall "
            << bench::Duration(info.wall_ms / 1000) << "\n";
  if (!info.stopped.empty()) {
    std::cout << "stopped early (" << info.stopped << "): " << info.not_evaluated
              << " samples not evaluated; run the same command again to finish\n";
  }
}

int RunBench(const BenchFlags& f) {
  auto d = DiscoverBench(f);
  if (!d.ok()) {
    std::cerr << "kforge bench: " << d.status().message() << "\n";
    return kExitUsage;
  }
  eval::EvalOptions opt = ToEvalOptions(f.eval);
  auto ev = eval::Evaluator::Create(opt);
  if (!ev.ok()) {
    std::cerr << "kforge bench: " << ev.status().message() << "\n";
    return kExitInfra;
  }
  bench::RunInfo info = BenchRunInfo(f, opt, (*ev)->lanes(), d->warnings);
  pipeline::PipelineOptions po = BenchPipelineOptions(f, info.lanes);
  info.build_threads = f.sequential ? 1 : po.build_threads;

  BenchState st(d->samples.size(), info.lanes);
  const std::atomic<bool>& signalled = StopOnSignals();
  // Each verdict as it arrives, so a run that is killed outright (an outer timeout, a lost
  // machine) still leaves what it learned beside the store; the full reports replace it.
  std::error_code mk;
  fs::create_directories(f.out, mk);
  const fs::path partial_path = fs::path(f.out) / "verdicts.partial.jsonl";
  std::ofstream partial(partial_path, std::ios::trunc);
  EvaluateSamples(f, *d, ev->get(), po, signalled, &st, &partial, &info);

  std::vector<bench::SampleRecord> done;
  std::vector<bench::Sample> samples = CollectDone(&st.records, st.have, &info, &done);
  bench::Metrics m = bench::Compute(samples, {.k = f.k, .significance = !f.eval.no_significance});
  PrintBenchSummary(m, info);
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
