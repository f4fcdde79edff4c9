// The cost model, sizing to a target time, and shape variants.
#include <algorithm>
#include <cmath>

#include "synth/internal.h"
#include "synth/ops.h"

namespace kf::synth {
namespace {

int ElemBytes(DType d) { return d == DType::kF32 ? 4 : 2; }

int RolePriority(VarRole r) {
  switch (r) {
    case VarRole::kBatch:
      return 0;
    case VarRole::kSequence:
      return 1;
    case VarRole::kSpatial:
      return 2;
    case VarRole::kCount:
      return 3;
    case VarRole::kFeature:
      return 4;
    case VarRole::kChannel:
      return 5;
  }
  return 6;
}

// 1, 2, 3, 4, 6, 8, 12, 16, 24, ...: round sizes about 1.4x apart.
int64_t LadderStep(int64_t v, bool up) {
  int64_t prev = 1;
  for (int64_t p = 1; p <= (int64_t{1} << 40); p *= 2) {
    for (int64_t c : {p, p + p / 2}) {
      if (c < 1 || (c == p + p / 2 && p == 1)) continue;
      if (up && c > v) return c;
      if (!up && c >= v) return prev;
      prev = c;
    }
  }
  return v;
}

std::vector<int> FreeByPriority(const Graph& g, uint64_t free) {
  std::vector<int> out;
  for (int v = 0; v < static_cast<int>(g.vars.size()); ++v) {
    if (free & (uint64_t{1} << v)) out.push_back(v);
  }
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    return RolePriority(g.vars[a].role) < RolePriority(g.vars[b].role);
  });
  return out;
}

}  // namespace

double PredictMs(const Graph& g, const Inference& inf, const Calibration& cal) {
  double ms = 0;
  for (const auto& n : g.nodes) {
    const OpSpec* spec = FindOp(n.op);
    std::vector<Shape> in;
    for (int a : n.args) in.push_back(inf.shapes[a]);
    Cost c = spec->cost(n, in, inf.shapes[n.value], ElemBytes(g.dtype));
    // The op's curve in the graph's dtype, else in fp32, else relu's or matmul's.
    auto it = cal.ops.find(CurveKey(n.op, g.dtype));
    if (it == cal.ops.end()) it = cal.ops.find(n.op);
    const OpCurve& curve = it != cal.ops.end() ? it->second
                           : spec->heavy       ? cal.fallback_heavy
                                               : cal.fallback;
    // A GEMM-shaped op is at least as slow as moving its bytes (relu's curve): a 1x1 conv on
    // a wide tensor is bound by memory, not by its FLOPs.
    ms += spec->heavy ? std::max(curve.Ms(c.flops), cal.fallback.Ms(c.bytes)) : curve.Ms(c.bytes);
  }
  return ms;
}

double PeakBytes(const Graph& g, const Inference& inf) {
  double bytes = 0;
  for (size_t v = 0; v < g.values.size(); ++v) {
    auto [is_input, idx] = g.values[v];
    int eb = is_input && g.inputs[idx].index ? 8 : ElemBytes(g.dtype);
    bytes += static_cast<double>(Numel(inf.shapes[v])) * eb;
  }
  for (const auto& n : g.nodes) {
    std::vector<Shape> in;
    for (int a : n.args) in.push_back(inf.shapes[a]);
    bytes += FindOp(n.op)->cost(n, in, inf.shapes[n.value], ElemBytes(g.dtype)).params *
             ElemBytes(g.dtype);
  }
  return bytes;
}

Status SizeGraph(Graph* g, double target_ms, double max_bytes, const Calibration& cal) {
  auto main = Infer(*g, MainValues(*g));
  if (!main.ok()) return main.status();
  std::vector<int> order = FreeByPriority(*g, FreeVars(*g, *main));
  if (order.empty()) return Status::Ok();
  auto eval = [&](double* ms, double* bytes) {
    auto inf = Infer(*g, MainValues(*g));
    if (!inf.ok()) return false;
    *ms = PredictMs(*g, *inf, cal);
    *bytes = PeakBytes(*g, *inf);
    return true;
  };
  double ms = 0, bytes = 0;
  eval(&ms, &bytes);
  int last_dir = 0;
  size_t next = 0;
  for (int step = 0; step < 400; ++step) {
    if (ms >= target_ms / 1.2 && ms <= target_ms * 1.2 && bytes <= max_bytes) break;
    bool up = ms < target_ms && bytes <= max_bytes;
    int dir = up ? 1 : -1;
    bool moved = false;
    for (size_t k = 0; k < order.size() && !moved; ++k) {
      int v = order[(next + k) % order.size()];
      int64_t old = g->vars[v].value;
      int64_t val = LadderStep(old, up);
      if (val == old || val < 1) continue;
      g->vars[v].value = val;
      double m2 = 0, b2 = 0;
      if (eval(&m2, &b2) && (!up || b2 <= max_bytes)) {
        // Stepping past the target: keep whichever side is closer, and stop.
        bool crossed = last_dir != 0 && dir != last_dir;
        if (crossed && std::fabs(std::log(m2 / target_ms)) > std::fabs(std::log(ms / target_ms))) {
          g->vars[v].value = old;
          return Status::Ok();
        }
        ms = m2, bytes = b2, moved = true;
        next = (next + k + 1) % order.size();
        if (crossed) return Status::Ok();
      } else {
        g->vars[v].value = old;
      }
    }
    if (!moved) break;
    last_dir = dir;
  }
  return Status::Ok();
}

std::vector<int64_t> ValuesOf(const Graph& g, const Variant& v) {
  std::vector<int64_t> vals = MainValues(g);
  for (const auto& [var, val] : v) vals[static_cast<size_t>(var)] = val;
  return vals;
}

std::vector<Variant> DrawVariants(const Graph& g, int count, double max_bytes, Rng& rng) {
  std::vector<Variant> out;
  auto main = Infer(g, MainValues(g));
  if (!main.ok()) return out;
  std::vector<int> free = FreeByPriority(g, FreeVars(g, *main));
  if (free.empty()) return out;
  for (int tries = 0; tries < 40 * count && static_cast<int>(out.size()) < count; ++tries) {
    Variant v;
    for (int var : free) {
      if (!rng.Chance(0.6)) continue;
      int64_t base = g.vars[var].value;
      double f = rng.Pick<double>({0.5, 0.75, 1.25, 1.5});
      int64_t x = std::max<int64_t>(1, std::llround(static_cast<double>(base) * f));
      if (x > 2) x += rng.Chance(0.5) ? 1 : -1;  // odd sizes: kernels that assume tiles fail
      if (x != base) v[var] = x;
    }
    if (v.empty()) continue;
    if (std::find(out.begin(), out.end(), v) != out.end()) continue;
    auto inf = Infer(g, ValuesOf(g, v));
    if (!inf.ok() || PeakBytes(g, *inf) > max_bytes) continue;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace kf::synth
