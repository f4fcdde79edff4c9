// agent: the generate-verify-repair loop behind `kforge generate` and the MCP tools. Asks a
// model for candidates, has each one verified, feeds the verdict's feedback back, and keeps
// the fastest correct and legal kernel. Records every turn for SFT, rejection sampling and RL.
//
// Thread-safety: Generate runs one thread per sample. The EvaluateFn it is given is called from
// those threads at once and must serialize what cannot overlap (an Evaluator lane); the
// callbacks are called one at a time.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "execute/execute.h"
#include "model/model.h"
#include "score/score.h"
#include "score/verdict.h"

namespace kf::agent {

// ---- prompts -------------------------------------------------------------------------------

// The editable prompt files (prompts/*.txt in the repository, or --prompt-dir):
//   system.txt        the system message
//   task.txt          the first user message: the problem, its shapes, the target, the format
//   repair.txt        appended on later turns: the previous candidate and its verdict
//   format_<format>.txt    the required reply format with one small example ({{output_format}}):
//                          format_cuda.txt, format_cpu.txt (load_inline), format_triton.txt
//   system_<format>.txt    optional: that format's own system message (system_triton.txt)
struct PromptTemplates {
  std::string system, task, repair, format;
};

// Replaces every {{name}} whose name is in `vars` (one pass: values are not expanded again).
// Names not in `vars` are left as they are and listed in *unknown when it is given.
std::string Substitute(const std::string& tmpl, const std::map<std::string, std::string>& vars,
                       std::vector<std::string>* unknown = nullptr);

// Reads the templates for a reply format (backend::PromptFormat: "cuda", "cpu", "triton");
// kNotFound for a missing file, kInvalidArgument for a placeholder no template may use (a typo
// would otherwise reach the model).
Result<PromptTemplates> LoadTemplates(const std::filesystem::path& dir, const std::string& format);
// prompts/ beside or above the executable, else in the source tree.
std::filesystem::path DefaultPromptDir();

// What the prompts say about the problem.
struct ProblemContext {
  std::string problem_id;
  std::string source;   // the problem file
  std::string shapes;   // DescribeShapes of what the judge measured
  std::string backend;  // "cuda", "cpu"
  std::string device;   // "NVIDIA H200", the CPU's name
};

// Text listing every input and output with dtype, shape, stride and contiguity.
std::string DescribeShapes(const execute::ProblemInfo& info);

// Turn 1: [system, task]. Later turns: [system, task + repair] (one user message, so prompts
// stay bounded and servers that insist on alternating roles accept them).
std::vector<model::Message> FirstPrompt(const PromptTemplates& t, const ProblemContext& c);
std::vector<model::Message> RepairPrompt(const PromptTemplates& t, const ProblemContext& c,
                                         int turn, const std::string& previous_candidate,
                                         const Verdict& previous, std::optional<double> target);

// ---- the loop ------------------------------------------------------------------------------

struct GenerateOptions {
  int samples = 4;  // independent conversations, run in parallel
  int turns = 3;    // model calls per sample at most
  // Without it a sample stops at its first correct kernel; with it, it keeps asking for a
  // faster one until the speedup over eager reaches this.
  std::optional<double> optimize_until;
  model::Sampling sampling;  // n is forced to 1; a set seed becomes seed + sample index
  score::PrimeEchoOptions prime_echo;
  // When set (optimize_kernel): turn 0 evaluates this candidate, with no model call, and the
  // model's first turn is a repair or optimization of it.
  std::string initial_candidate;
};

struct Turn {
  int sample = 0;
  int turn = 0;  // 1-based; 0 for the given initial candidate
  std::vector<model::Message> messages;
  std::string reply;      // the answer, reasoning removed
  std::string reasoning;  // the model's reasoning text, kept apart
  std::string finish_reason;
  std::string candidate;  // the code extracted from the reply ("" when none was found)
  std::optional<Verdict> verdict;
  std::optional<double> reward;  // the verdict's reward; none for infra_error or no verdict
  std::string error;             // the model call failed: why
  nlohmann::json usage;
  double model_ms = 0, eval_ms = 0;
};

struct Trajectory {
  int sample = 0;
  std::vector<Turn> turns;
  std::vector<double> rewards;  // per model turn with a reward, in order
  int first_pass_turn = 0;      // first turn whose verdict is ok, 0 when none
  double prime_echo = 0;        // PrimeEcho over `rewards`
  int best_turn = -1;           // fastest correct turn of this sample, -1 when none
  std::string
      stop_reason;  // "passed", "target_reached", "turns_exhausted", "model_error", "aborted"
};

struct Best {
  int sample = 0, turn = 0;
  std::string candidate;
  Verdict verdict;
};

struct GenerateResult {
  std::vector<Trajectory> trajectories;  // by sample index
  std::optional<Best> best;              // the fastest correct and legal kernel, if any
  Status model_error;                    // the first failed model call, which stopped the run
};

using EvaluateFn = std::function<Verdict(const std::string& candidate)>;
struct Callbacks {
  std::function<void(const Turn&)> on_turn;
  std::function<void(const Trajectory&)> on_trajectory;
};

GenerateResult Generate(const GenerateOptions& opt, const PromptTemplates& templates,
                        const ProblemContext& context, model::ModelClient& client,
                        const EvaluateFn& evaluate, const Callbacks& callbacks = {});

// One JSONL record each (docs/CLI.md, "kforge generate"): {"type":"turn",...} and
// {"type":"trajectory",...}.
nlohmann::json TurnJson(const Turn& t);
nlohmann::json TrajectoryJson(const Trajectory& t);

}  // namespace kf::agent
