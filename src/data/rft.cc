// rft: per problem, the k most diverse correct and legal kernels above a speedup threshold.
#include <algorithm>
#include <map>

#include "data/internal.h"
#include "similarity/similarity.h"

namespace kf::data {
namespace {
using nlohmann::json;

struct Entry {
  const Sample* sample;
  const Conversation* conv;  // null for a bench sample
  std::string hash;
  double speedup;
  std::vector<uint64_t> minhash;
};

bool Faster(const Entry& a, const Entry& b) {
  if (a.speedup != b.speedup) return a.speedup > b.speedup;
  return a.hash < b.hash;
}

}  // namespace

Output Rft(const Corpus& c, const RftOptions& opt, const PromptFn& prompt) {
  Output out;
  // Per problem, one entry per distinct candidate (the faster verdict when it was seen twice).
  std::map<std::string, std::map<std::string, Entry>> pools;
  auto offer = [&](const Sample& s, const Conversation* conv) {
    if (!IsOk(s) || s.candidate.empty()) return;
    auto speedup = s.verdict.speedup_vs_eager;
    if (!(speedup ? *speedup >= opt.min_speedup : opt.min_speedup <= 0)) return;
    Entry e{&s, conv, CandidateHash(s), speedup.value_or(0), {}};
    auto& pool = pools[s.problem];
    auto it = pool.find(e.hash);
    if (it == pool.end() || Faster(e, it->second)) pool[e.hash] = e;
  };
  for (const auto& conv : c.conversations) {
    for (const auto& t : conv.turns) offer(t, &conv);
  }
  for (const auto& s : c.bench) offer(s, nullptr);

  for (auto& [problem, pool] : pools) {
    std::vector<Entry> cands;
    for (auto& [hash, e] : pool) {
      e.minhash = similarity::MinHash(
          similarity::Shingles(similarity::KernelTokens(e.sample->candidate), opt.ngram),
          opt.num_hashes);
      cands.push_back(e);
    }
    std::sort(cands.begin(), cands.end(), Faster);
    std::vector<const Entry*> kept;
    std::vector<double> closest;  // per kept entry: its highest similarity to an earlier one
    std::vector<bool> used(cands.size(), false);
    while (static_cast<int>(kept.size()) < opt.k) {
      int pick = -1;
      double pick_sim = 2;  // lower is farther; cands are in speed order, so ties go faster
      for (size_t i = 0; i < cands.size(); ++i) {
        if (used[i]) continue;
        double sim = 0;
        for (const Entry* k : kept) {
          sim = std::max(sim, similarity::EstimatedJaccard(cands[i].minhash, k->minhash));
        }
        if (!kept.empty() && sim > opt.max_similarity) {
          used[i] = true;  // the same solution as one kept
          continue;
        }
        if (sim < pick_sim) pick = static_cast<int>(i), pick_sim = sim;
      }
      if (pick < 0) break;
      used[static_cast<size_t>(pick)] = true;
      kept.push_back(&cands[static_cast<size_t>(pick)]);
      closest.push_back(kept.size() == 1 ? 0 : pick_sim);
    }
    for (size_t r = 0; r < kept.size(); ++r) {
      const Sample& s = *kept[r]->sample;
      auto p = PromptFor(c, s.problem, s.problem_hash, s.problem_path, prompt);
      if (kept[r]->conv != nullptr) {
        for (const auto& t : kept[r]->conv->turns) {
          if (t.turn == 1 && t.messages.size() >= 2) p = t.messages;  // what this model was asked
        }
      }
      if (p.ok() && p->size() < 2) p = Status::Invalid("its prompt is not [system, user]");
      if (!p.ok()) {
        out.warnings.push_back(s.origin + ": " + p.status().message());
        continue;
      }
      Example e;
      e.messages = {(*p)[0], (*p)[1], {"assistant", Answer(s, false)}};
      e.metadata = {{"source", kept[r]->conv ? "generate" : "bench"},
                    {"origin", s.origin},
                    {"problem", s.problem},
                    {"problem_hash", s.problem_hash},
                    {"rank", r},
                    {"speedup_vs_eager", kept[r]->speedup},
                    {"candidate_hash", kept[r]->hash},
                    {"similarity_to_kept", closest[r]},
                    {"pool", cands.size()}};
      out.examples.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace kf::data
