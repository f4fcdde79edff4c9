// What `kforge generate` and `kforge mcp` share: evaluation and model flags, the engine they
// evaluate through, and one generation run (shape injection, templates, the files written to
// the output folder).
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "cli/eval_flags.h"
#include "common/status.h"
#include "eval/eval.h"
#include "model/model.h"
#include "pipeline/pipeline.h"

namespace kf::cli {

struct ModelSetup {
  std::string url;  // "http://localhost:8000/v1"
  std::string model;
  std::string api_key_env = "OPENAI_API_KEY";
  int request_timeout_s = 600;
  int retries = 3;
  int concurrency = 0;  // 0: one request per sample at once
  double temperature = 0.7;
  double top_p = 0.95;
  int max_tokens = 16384;
  std::vector<std::string> stop;
  int64_t seed = -1;  // -1: unset
  std::string prompt_dir;
};
void AddModelFlags(CLI::App* app, ModelSetup* f);
model::Sampling MakeSampling(const ModelSetup& f);

// A client for the server at f.url; kUnavailable when kforge was built without KFORGE_NET.
Result<std::unique_ptr<model::ModelClient>> MakeClient(const ModelSetup& f, int samples);

// The engine of a generation session: an Evaluator for `opt` inside kforge's one pipeline
// (builds in parallel on every core, one executor per lane, stored verdicts reused).
Result<std::unique_ptr<pipeline::Pipeline>> MakeGenerationEngine(const eval::EvalOptions& opt);

struct GenerationRequest {
  std::filesystem::path problem;
  std::filesystem::path out_dir;  // empty: write no files
  std::string backend;
  std::string prompt_format;  // backend::PromptFormat: "cuda", "cpu", "triton"
  agent::GenerateOptions options;
  std::filesystem::path prompt_dir;                 // empty: DefaultPromptDir()
  std::ostream* progress = nullptr;                 // one line per finished turn, when set
  std::function<void(const agent::Turn&)> on_turn;  // each finished turn, when set (any thread)
};

struct GenerationReport {
  agent::GenerateResult result;
  std::filesystem::path best_path, verdict_path, trajectories_path;  // what was written
  int infra_errors = 0;  // turns whose verdict is infra_error
};

// Describes the problem, loads the templates, runs the loop and writes trajectories.jsonl
// (streamed, one line per turn, then one per trajectory), best.py and best.json to out_dir.
// Fails only when it could not start (unreadable problem, bad templates, the judge died
// describing the problem, an unwritable out_dir); model failures are in result.model_error.
Result<GenerationReport> RunGeneration(pipeline::Pipeline& engine, model::ModelClient& client,
                                       const GenerationRequest& req);

// "sample 1 turn 2: incorrect  5/7 trials  reward -0.14  (model 3.1 s, verify 4.2 s)"
std::string ProgressLine(const agent::Turn& t);

}  // namespace kf::cli
