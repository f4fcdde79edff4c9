// bench report: turns a run's metrics and verdicts into what `kforge bench` leaves behind:
// results.json (metrics + run facts), report.md, report.html (self-contained: inline CSS and
// SVG charts, no scripts, nothing fetched) and verdicts.jsonl (one verdict per sample), plus the
// terminal table. Formatting only; the numbers come from metrics.h.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/metrics.h"
#include "bench/timeline.h"
#include "common/status.h"
#include "score/verdict.h"

namespace kf::bench {

struct SampleRecord {
  std::string level, problem;
  std::filesystem::path problem_path, sample_path;
  int index = 0;
  bool from_store = false;  // the verdict was stored by an earlier run, nothing was evaluated
  Verdict verdict;
};

// Facts about the run itself (what it cost, where it ran), reported beside the metrics.
struct RunInfo {
  std::string started_at;  // UTC, ISO 8601
  std::string model;       // bench --model (the samples folder's name by default)
  std::string backend, device;
  std::string policy = "strict";  // the acceptance rule every verdict of the run was reached under
  std::vector<std::string> problem_roots;
  std::string samples_root;
  int lanes = 1;
  int build_threads = 1;
  bool sequential = false;
  bool baselines = true;
  size_t samples = 0;       // sample files evaluated or reused
  size_t evaluated = 0;     // distinct candidates evaluated in this run
  size_t reused = 0;        // distinct candidates answered from the store
  size_t deduplicated = 0;  // sample files identical to another one in flight
  double wall_ms = 0;
  double build_busy_ms = 0;  // wall time inside Prepare, summed over build threads
  double build_cpu_ms = 0;   // CPU time of the compiles this run ran (verdicts' build.cpu_ms)
  size_t compiled = 0;        // extensions compiled in this run (cache hits excluded)
  size_t compiled_with_pch = 0;  // of those, against a precompiled torch/extension.h
  size_t compiled_light = 0;     // of those, cuda.cu with light headers (--light-headers)
  size_t compiled_light_fell_back = 0;  // tried light, built again as written
  size_t compiled_split = 0;            // split builds (--split-build)
  size_t warmed = 0;          // problems prepared ahead on idle lanes (reference, baselines)
  size_t retried = 0;         // timed again once no build ran (the first timing spoiled by load)
  std::vector<double> lane_busy_ms;  // wall time inside Execute and lane warm-ups, per lane
  double warm_ms = 0;                // of that, the warm-ups (problems prepared ahead), summed
  Timeline timeline;                 // done, lanes busy and the build queue over the run
  std::vector<std::string> warnings;
  // Why the run stopped before its end ("the time limit of 600 s", "a signal"); "" when it
  // ran to the end. `not_evaluated` samples were left for a rerun (never stored).
  std::string stopped;
  size_t not_evaluated = 0;
};

// One row per metric, one column per group: "overall", then each level.
struct Table {
  std::vector<std::string> columns;
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
};
Table SummaryTable(const Metrics& m);

std::string RenderText(const Table& t);  // aligned columns for the terminal
std::string RenderMarkdown(const Metrics& m, const RunInfo& info);
std::string RenderHtml(const Metrics& m, const RunInfo& info);
nlohmann::json ResultsJson(const Metrics& m, const RunInfo& info);
nlohmann::json RecordJson(const SampleRecord& r);  // one line of verdicts.jsonl

// Writes the four files into `out_dir` (created). Each file is written whole to a temporary
// name and renamed, so a reader never sees half a report.
Status WriteOutputs(const std::filesystem::path& out_dir, const Metrics& m, const RunInfo& info,
                    const std::vector<SampleRecord>& records);

// "12.5%", "1.23x", "n/a" for absent values.
std::string Percent(double fraction);
std::string Times(std::optional<double> x);

}  // namespace kf::bench
