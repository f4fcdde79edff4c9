// record: what `kforge bench` tells the store about a run (store.h: runs, run_samples, texts),
// so the web UI (`kforge ui`, `kforge serve`'s pages) can list, compare and rank runs. Pure
// conversions; bench_command writes them.
#pragma once

#include <filesystem>
#include <string>

#include "bench/metrics.h"
#include "bench/report.h"
#include "store/store.h"

namespace kf::bench {

// The run's row: model, start, backend, device, policy, k, and the metrics (the overall ones
// alone, and results.json whole).
store::RunRow RunRowOf(const Metrics& m, const RunInfo& info);
// A sample's row; `verdict_key` is where its verdict is stored (eval::Evaluator::StoreKey).
store::RunSampleRow SampleRowOf(const SampleRecord& r, const std::string& verdict_key);
// The model bench records when --model is not given: the samples folder's own name
// ("runs/gpt-x/" gives "gpt-x"); "samples" when the path has no name (".").
std::string DefaultModelName(const std::filesystem::path& samples_root);

}  // namespace kf::bench
