// Drawing a random graph for a level from the op table.
#include <algorithm>
#include <set>

#include "synth/internal.h"
#include "synth/ops.h"

namespace kf::synth {
namespace {

struct Pools {
  std::vector<const OpSpec*> all, heavy, light, level1, binary;
};

Pools MakePools(const DrawOptions& opt) {
  std::set<std::string> allowed(opt.ops.begin(), opt.ops.end());
  Pools p;
  for (const auto& op : Ops()) {
    if (!allowed.empty() && !allowed.count(op.name)) continue;
    if (!(op.dtypes & DTypeBit(opt.dtype))) continue;
    p.all.push_back(&op);
    (op.heavy ? p.heavy : p.light).push_back(&op);
    if (op.level1) p.level1.push_back(&op);
    if (op.category == "binary" || op.name == "concat") p.binary.push_back(&op);
  }
  return p;
}

// Starts a graph with `op` on a fresh input of one of its ranks.
bool StartWith(Builder& b, const OpSpec& op) {
  int rank = b.rng().Pick(op.ranks);
  int x = op.start ? op.start(b, rank) : StartByRank(b, rank);
  return b.Apply(op.name, x);
}

// Applies one op from `pool` to the last value; a few tries, never the same pointwise op twice
// in a row (relu after relu computes nothing new).
bool Step(Builder& b, const std::vector<const OpSpec*>& pool) {
  if (pool.empty()) return false;
  const Graph& g = b.graph();
  std::string prev = g.nodes.empty() ? "" : g.nodes.back().op;
  for (int tries = 0; tries < 12; ++tries) {
    const OpSpec* op = b.rng().Pick(pool);
    if (op->name == prev && op->category != "conv" && op->category != "matmul") continue;
    if (b.Apply(op->name, b.last())) return true;
  }
  return false;
}

bool HasSkip(const Graph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (size_t a = 1; a < g.nodes[i].args.size(); ++a) {
      if (!g.values[g.nodes[i].args[a]].first) return true;  // an earlier node's value
    }
  }
  return false;
}

int HeavyCount(const Graph& g) {
  int n = 0;
  for (const auto& node : g.nodes) n += FindOp(node.op)->heavy ? 1 : 0;
  return n;
}

bool OutputOk(const Graph& g) {
  auto inf = Infer(g, MainValues(g));
  if (!inf.ok() || g.output < 0) return false;
  const Shape& s = inf->shapes[g.output];
  return !s.empty() && Numel(s) >= 2;
}

Result<Graph> DrawOnce(const DrawOptions& opt, const Pools& p, Rng& rng) {
  Graph g;
  g.dtype = opt.dtype;
  g.level = opt.level;
  Builder b(&g, &rng);
  if (!opt.only.empty()) {
    const OpSpec* op = FindOp(opt.only);
    if (op == nullptr) return Status::Invalid("no op named " + opt.only);
    if (!StartWith(b, *op)) return Status::Invalid(opt.only + " did not apply");
    return g;
  }
  if (opt.level == 1) {
    if (p.level1.empty()) return Status::Invalid("no allowed op makes a level-1 problem");
    if (!StartWith(b, *rng.Pick(p.level1))) return Status::Invalid("the op did not apply");
    return g;
  }
  const auto& anchors = p.heavy.empty() ? p.level1 : p.heavy;
  if (anchors.empty()) return Status::Invalid("no allowed op can start a graph");
  if (!StartWith(b, *rng.Pick(anchors))) return Status::Invalid("the anchor did not apply");
  int n =
      opt.level == 2 ? static_cast<int>(rng.Uniform(2, 5)) : static_cast<int>(rng.Uniform(5, 8));
  double p_heavy = opt.level == 2 ? 0.1 : 0.35;
  while (static_cast<int>(g.nodes.size()) < n) {
    bool want_skip =
        opt.level == 3 && !HasSkip(g) && !b.SameShape(b.last()).empty() && rng.Chance(0.6);
    const auto& pool = want_skip && !p.binary.empty()              ? p.binary
                       : (rng.Chance(p_heavy) && !p.heavy.empty()) ? p.heavy
                                                                   : p.light;
    if (!Step(b, pool) && !Step(b, p.all)) break;
  }
  if (static_cast<int>(g.nodes.size()) < n) return Status::Invalid("ran out of applicable ops");
  if (opt.level == 3 && (HeavyCount(g) < 2 || !HasSkip(g))) {
    return Status::Invalid("no two anchors and a skip connection");
  }
  return g;
}

}  // namespace

Result<Graph> DrawGraph(const DrawOptions& opt, Rng& rng) {
  Pools p = MakePools(opt);
  if (p.all.empty())
    return Status::Invalid(std::string("no allowed op supports ") + DTypeName(opt.dtype));
  Status last = Status::Invalid("no graph");
  for (int attempt = 0; attempt < 60; ++attempt) {
    auto g = DrawOnce(opt, p, rng);
    if (g.ok() && OutputOk(*g)) return g;
    last = g.ok() ? Status::Invalid("the output is too small") : g.status();
    if (!opt.only.empty() && !g.ok()) break;
  }
  return last;
}

std::vector<std::string> OpNames(const Graph& g) {
  std::vector<std::string> out;
  for (const auto& n : g.nodes) out.push_back(n.op);
  return out;
}

}  // namespace kf::synth
