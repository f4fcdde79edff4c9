// data: training sets from what kforge recorded (`kforge data`): the turns of `kforge generate`
// (trajectories.jsonl) and the verdicts of `kforge bench` (verdicts.jsonl), or any JSONL of the
// same record shapes (docs/TRAINING.md).
//   sft  chat messages -> the final correct and legal kernel, optionally with the repair turns;
//   rft  per problem, correct and legal kernels above a speedup, the k most diverse (MinHash of
//        kernel token 5-grams);
//   rl   one prompt per problem with its difficulty from Pass@k, easiest first (a curriculum).
// Examples come out in the OpenAI chat format ({"messages": [...]}) or as the rows verl's
// datasets read (data_source, prompt, ability, reward_model, extra_info).
//
// Thread-safety: pure functions of their inputs, except the PromptFn the caller passes in.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/model.h"
#include "score/verdict.h"

namespace kf::data {

// One evaluated candidate.
struct Sample {
  std::string origin;                    // "FILE:LINE" of its record
  std::string problem;                   // the verdict's problem id: "level1/relu"
  std::string problem_hash;              // the problem text's SHA-256 (one version of the problem)
  std::filesystem::path problem_path;    // when the record names it (bench)
  std::string candidate;                 // the code; "" when its file could not be read
  std::string reply;                     // the model's answer (generate); "" for a bench file
  std::string reasoning;                 // kept apart from the answer (generate)
  std::vector<model::Message> messages;  // the prompt as sent (generate)
  Verdict verdict;
  int turn = 0;  // generate: 1-based turn; bench: 0
};

// A generate conversation: its turns in order.
struct Conversation {
  std::string key;  // "FILE#sample"
  std::vector<Sample> turns;
};

struct Corpus {
  std::vector<Sample> bench;                // one per bench record
  std::vector<Conversation> conversations;  // one per generate sample
  std::vector<std::string> warnings;        // records skipped, files not found
};

// Reads generate trajectories (`trajectories`) and bench verdicts (`verdicts`): JSONL files,
// or folders searched recursively for trajectories.jsonl / verdicts.jsonl. A record that is
// not valid is a warning, never a stop; a path that does not exist is an error. A bench
// record's candidate is its "candidate" field, else the file its "sample" names (relative
// paths: to the working folder, else to the verdicts file's folder).
Result<Corpus> Load(const std::vector<std::filesystem::path>& trajectories,
                    const std::vector<std::filesystem::path>& verdicts);

// The first-turn prompt `kforge generate` would send for a problem file (system, task).
using PromptFn =
    std::function<Result<std::vector<model::Message>>(const std::filesystem::path& problem)>;

struct Example {
  std::vector<model::Message> messages;
  nlohmann::json metadata = nlohmann::json::object();
};

struct Output {
  std::vector<Example> examples;
  std::vector<std::string> warnings;  // problems or samples left out, and why
};

struct SftOptions {
  bool repairs = false;    // the whole conversation up to the final kernel, turn by turn
  bool reasoning = false;  // keep the model's reasoning, as <think>...</think> before the answer
};
// Per generate conversation that reached a correct and legal kernel: its prompt and the
// fastest correct turn's answer (with repairs: every turn until it, the feedback as user
// turns). Per bench sample with status ok: the problem's prompt (from a conversation of the
// same problem, else `prompt`) and the sample as the answer. Identical (problem, candidate)
// pairs appear once.
Output Sft(const Corpus& c, const SftOptions& opt, const PromptFn& prompt);

struct RftOptions {
  double min_speedup = 1.0;     // vs eager; a verdict without one passes only a threshold <= 0
  int k = 4;                    // kernels kept per problem at most
  int ngram = 5;                // KernelTokens n-grams
  int num_hashes = 128;         // MinHash signature length
  double max_similarity = 0.9;  // a kernel this close to a kept one is the same solution
};
// Per problem: the ok samples at or above min_speedup (one per distinct candidate), chosen
// greedily: the fastest first, then each time the one farthest (1 - estimated Jaccard) from
// those kept, skipping any within max_similarity of one kept, until k.
Output Rft(const Corpus& c, const RftOptions& opt, const PromptFn& prompt);

struct RlOptions {
  int k = 1;  // Pass@k's k
  std::string data_source = "kforge";
  double min_difficulty = 0, max_difficulty = 1;  // keep problems in [min, max]
  bool inline_problems = false;  // ground_truth is the problem's source, not its id
  // Problems to include without samples (difficulty unknown, listed last): id -> file.
  std::map<std::string, std::filesystem::path> extra_problems;
};
// One prompt per problem. Samples: every bench record and every generate turn 1 (the
// single-shot answer); infra_error samples are not counted (bench's rule). difficulty =
// 1 - Pass@k; bucket: easy (< 1/3), medium (< 2/3), hard (< 1), unsolved (no pass).
// Sorted by difficulty, easiest first; problems without samples last.
Output Rl(const Corpus& c, const RlOptions& opt, const PromptFn& prompt,
          const std::function<Result<std::string>(const std::filesystem::path&)>& read_file);

// JSONL lines: chat ({"messages", "metadata"}) or verl rows. For rl, verl rows are
// {data_source, prompt, ability, reward_model{style, ground_truth}, extra_info}; for sft and
// rft {messages, extra_info} (verl's multi-turn SFT dataset reads `messages`).
enum class Format { kChat, kVerl };
std::string ToJsonl(const Output& out, Format format, bool rl);

}  // namespace kf::data
