#include "common/hash.h"
#include "data/internal.h"

namespace kf::data {

bool IsOk(const Sample& s) { return s.verdict.status == VerdictStatus::kOk; }

std::string Answer(const Sample& s, bool reasoning) {
  if (!s.reply.empty()) {
    if (reasoning && !s.reasoning.empty()) {
      return "<think>\n" + s.reasoning + "\n</think>\n\n" + s.reply;
    }
    return s.reply;
  }
  if (s.candidate.find("```") != std::string::npos) return s.candidate;
  std::string code = s.candidate;
  if (!code.empty() && code.back() != '\n') code += '\n';
  return "```python\n" + code + "```";
}

Result<std::vector<model::Message>> PromptFor(const Corpus& c, const std::string& problem,
                                              const std::string& problem_hash,
                                              const std::filesystem::path& path,
                                              const PromptFn& prompt) {
  const std::vector<model::Message>* other_version = nullptr;
  for (const auto& conv : c.conversations) {
    for (const auto& t : conv.turns) {
      if (t.turn != 1 || t.messages.empty() || t.problem != problem) continue;
      if (t.problem_hash == problem_hash) return t.messages;
      if (other_version == nullptr) other_version = &t.messages;
    }
  }
  if (!path.empty() && prompt) return prompt(path);
  if (other_version != nullptr) return *other_version;
  return Status::NotFound("no prompt for " + problem +
                          ": no generate turn of it and no problem file (pass --problems DIR)");
}

std::string CandidateHash(const Sample& s) {
  return s.verdict.candidate_hash.empty() ? Sha256Hex(s.candidate) : s.verdict.candidate_hash;
}

std::string LevelOf(const std::string& problem) {
  auto slash = problem.rfind('/');
  return slash == std::string::npos ? "" : problem.substr(0, slash);
}

}  // namespace kf::data
