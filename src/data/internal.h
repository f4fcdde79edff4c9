// What the data modes share. Internal to data.
#pragma once

#include <string>
#include <vector>

#include "data/data.h"

namespace kf::data {

bool IsOk(const Sample& s);
// The assistant turn for a sample: the model's answer (with its reasoning in <think> tags
// when asked and there is some), else the candidate file as a model would have written it:
// as is when it holds a fenced block (a raw reply), else in a ```python fence.
std::string Answer(const Sample& s, bool reasoning);
// The turn-1 prompt of a problem: one generate sent for it (a conversation's turn 1, the same
// problem version first), else `prompt` of its file (a bench record's problem_path or `path`).
Result<std::vector<model::Message>> PromptFor(const Corpus& c, const std::string& problem,
                                              const std::string& problem_hash,
                                              const std::filesystem::path& path,
                                              const PromptFn& prompt);
std::string CandidateHash(const Sample& s);
// "level1" of "level1/relu"; "" for an id without a folder.
std::string LevelOf(const std::string& problem);

}  // namespace kf::data
