// sft: prompt -> the final correct and legal kernel, optionally through the repair turns.
#include <set>

#include "data/internal.h"

namespace kf::data {
namespace {
using nlohmann::json;

// The fastest ok turn (the earliest among equals); nullptr when none passed.
const Sample* Best(const Conversation& conv) {
  const Sample* best = nullptr;
  for (const auto& t : conv.turns) {
    if (!IsOk(t)) continue;
    double s = t.verdict.speedup_vs_eager.value_or(0);
    if (best == nullptr || s > best->verdict.speedup_vs_eager.value_or(0)) best = &t;
  }
  return best;
}

const Sample* FirstPrompted(const Conversation& conv) {
  for (const auto& t : conv.turns) {
    if (t.messages.size() >= 2) return &t;
  }
  return nullptr;
}

// system, task, then per turn until `best` its answer and the next turn's feedback. Later
// turns were sent as one user message, task + "\n\n" + repair: the repair part is the user turn.
// Empty when a turn on the way has no answer (a failed model call).
std::vector<model::Message> WithRepairs(const Conversation& conv, const Sample& first,
                                        const Sample& best, bool reasoning) {
  std::vector<model::Message> m = {first.messages[0], first.messages[1]};
  const std::string& task = first.messages[1].content;
  bool started = false;
  for (const auto& t : conv.turns) {
    if (&t == &first) started = true;
    if (!started) continue;
    if (&t != &first) {
      if (t.messages.size() < 2) return {};
      std::string user = t.messages[1].content;
      if (user.rfind(task + "\n\n", 0) == 0) user = user.substr(task.size() + 2);
      m.push_back({"user", user});
    }
    if (t.reply.empty()) return {};
    m.push_back({"assistant", Answer(t, reasoning)});
    if (&t == &best) return m;
  }
  return {};
}

}  // namespace

Output Sft(const Corpus& c, const SftOptions& opt, const PromptFn& prompt) {
  Output out;
  std::set<std::pair<std::string, std::string>> seen;  // (problem, candidate hash)
  for (const auto& conv : c.conversations) {
    const Sample* best = Best(conv);
    const Sample* first = FirstPrompted(conv);
    if (best == nullptr || first == nullptr || best->candidate.empty()) continue;
    if (!seen.insert({best->problem, CandidateHash(*best)}).second) continue;
    Example e;
    if (opt.repairs && best != first) e.messages = WithRepairs(conv, *first, *best, opt.reasoning);
    if (e.messages.empty()) {
      e.messages = {
          first->messages[0], first->messages[1], {"assistant", Answer(*best, opt.reasoning)}};
    }
    int assistant_turns = 0;
    for (const auto& m : e.messages) assistant_turns += m.role == "assistant" ? 1 : 0;
    e.metadata = {
        {"source", "generate"},
        {"origin", best->origin},
        {"problem", best->problem},
        {"problem_hash", best->problem_hash},
        {"turn", best->turn},
        {"assistant_turns", assistant_turns},
        {"speedup_vs_eager",
         best->verdict.speedup_vs_eager ? json(*best->verdict.speedup_vs_eager) : json(nullptr)},
        {"candidate_hash", CandidateHash(*best)}};
    out.examples.push_back(std::move(e));
  }
  for (const auto& s : c.bench) {
    if (!IsOk(s) || s.candidate.empty()) continue;
    if (!seen.insert({s.problem, CandidateHash(s)}).second) continue;
    auto p = PromptFor(c, s.problem, s.problem_hash, s.problem_path, prompt);
    if (!p.ok()) {
      out.warnings.push_back(s.origin + ": " + p.status().message());
      continue;
    }
    Example e;
    e.messages = *p;
    e.messages.push_back({"assistant", Answer(s, opt.reasoning)});
    e.metadata = {{"source", "bench"},
                  {"origin", s.origin},
                  {"problem", s.problem},
                  {"problem_hash", s.problem_hash},
                  {"turn", 1},
                  {"assistant_turns", 1},
                  {"speedup_vs_eager",
                   s.verdict.speedup_vs_eager ? json(*s.verdict.speedup_vs_eager) : json(nullptr)},
                  {"candidate_hash", CandidateHash(s)}};
    out.examples.push_back(std::move(e));
  }
  return out;
}

}  // namespace kf::data
