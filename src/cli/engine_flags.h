// Flags shared by `kforge serve` and `kforge worker`: how candidates are evaluated.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>

#include "cli/eval_flags.h"

namespace kf::cli {

void AddEngineFlags(CLI::App* app, EvalFlags* f);

// SIGINT and SIGTERM set the returned flag (installed once per process).
const std::atomic<bool>& StopOnSignals();

}  // namespace kf::cli
