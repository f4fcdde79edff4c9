// The Builder and the helpers every op family shares; the op table itself.
#include <cmath>
#include <cstdio>
#include <map>

#include "synth/ops.h"

namespace kf::synth {

Builder::Builder(Graph* g, Rng* rng) : g_(g), rng_(rng) {
  auto inf = Infer(*g_, MainValues(*g_));
  if (inf.ok()) main_ = std::move(*inf);
}

bool Builder::is_index(int value) const {
  auto [is_input, idx] = g_->values[value];
  return is_input && g_->inputs[idx].index;
}

int Builder::NewVar(const std::string& base, VarRole role, int64_t value) {
  std::string name = base;
  for (int k = 2;; ++k) {
    bool taken = false;
    for (const auto& v : g_->vars) taken = taken || v.name == name;
    if (!taken) break;
    name = base + "_" + std::to_string(k);
  }
  g_->vars.push_back(SizeVar{name, role, value});
  return static_cast<int>(g_->vars.size()) - 1;
}

int Builder::NewInput(const std::vector<int>& dims, const std::string& name_hint, bool index,
                      int bound_var) {
  static const char* kFloatNames[] = {"x", "y", "z", "u", "v", "w"};
  int floats = 0, indices = 0;
  for (const auto& in : g_->inputs) (in.index ? indices : floats)++;
  std::string name = name_hint;
  auto taken = [&](const std::string& n) {
    for (const auto& in : g_->inputs) {
      if (in.name == n) return true;
    }
    return false;
  };
  if (name.empty() || taken(name)) {
    if (index) {
      name = indices == 0 ? "idx" : "idx" + std::to_string(indices + 1);
    } else {
      name = floats < 6 ? kFloatNames[floats] : "x" + std::to_string(floats);
    }
    while (taken(name)) name += "_";
  }
  Input in{name, dims, index, bound_var, static_cast<int>(g_->values.size())};
  g_->inputs.push_back(in);
  g_->values.push_back({true, static_cast<int>(g_->inputs.size()) - 1});
  Shape s;
  for (int v : dims) s.push_back(Dim{g_->vars[v].value, uint64_t{1} << v, v});
  main_.shapes.push_back(std::move(s));
  return in.value;
}

std::vector<int> Builder::SameShape(int x) const {
  std::vector<int> out;
  const Shape& sx = shape(x);
  for (size_t v = 0; v < g_->values.size(); ++v) {
    if (static_cast<int>(v) == x || is_index(static_cast<int>(v))) continue;
    const Shape& s = shape(static_cast<int>(v));
    bool same = s.size() == sx.size();
    for (size_t i = 0; same && i < s.size(); ++i) {
      same = s[i].n == sx[i].n && s[i].deps == sx[i].deps;
    }
    if (same) out.push_back(static_cast<int>(v));
  }
  return out;
}

std::vector<int> Builder::DimVars(int x) const {
  std::vector<int> out;
  for (const auto& d : shape(x)) {
    if (d.var < 0) return {};
    out.push_back(d.var);
  }
  return out;
}

bool Builder::Apply(const std::string& op, int x) {
  const OpSpec* spec = FindOp(op);
  if (spec == nullptr || x < 0) return false;
  if (!(spec->dtypes & DTypeBit(g_->dtype)) || is_index(x)) return false;
  bool rank_ok = false;
  for (int r : spec->ranks) rank_ok = rank_ok || static_cast<size_t>(r) == shape(x).size();
  if (!rank_ok) return false;
  Graph saved = *g_;
  Inference saved_main = main_;
  Node n;
  n.op = op;
  if (spec->propose(*this, x, &n)) {
    n.value = static_cast<int>(g_->values.size());
    g_->values.push_back({false, static_cast<int>(g_->nodes.size())});
    g_->nodes.push_back(n);
    g_->output = n.value;
    auto inf = Infer(*g_, MainValues(*g_));
    if (inf.ok()) {
      main_ = std::move(*inf);
      return true;
    }
  }
  *g_ = std::move(saved);
  main_ = std::move(saved_main);
  return false;
}

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (const auto& d : s) n *= d.n;
  return n;
}

uint64_t Deps(const Shape& s) {
  uint64_t d = 0;
  for (const auto& x : s) d |= x.deps;
  return d;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string Int(int64_t v) { return std::to_string(v); }

int NormDim(int64_t dim, size_t rank) {
  int r = static_cast<int>(rank);
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

Cost PointwiseCost(const std::vector<Shape>& in, const Shape& out, int elem_bytes,
                   double flops_per_elem) {
  Cost c;
  for (const auto& s : in) c.bytes += static_cast<double>(Numel(s)) * elem_bytes;
  c.bytes += static_cast<double>(Numel(out)) * elem_bytes;
  c.flops = static_cast<double>(Numel(out)) * flops_per_elem;
  return c;
}

int StartByRank(Builder& b, int rank) {
  Rng& r = b.rng();
  std::vector<int> dims = {b.NewVar("batch_size", VarRole::kBatch, r.Pick<int64_t>({4, 8, 16}))};
  if (rank == 2) {
    dims.push_back(
        b.NewVar("features", VarRole::kFeature, r.Pick<int64_t>({64, 128, 256, 512, 1024})));
    return b.NewInput(dims);
  }
  dims.push_back(b.NewVar("channels", VarRole::kChannel, r.Pick<int64_t>({4, 8, 16, 32, 64})));
  if (rank == 3) {
    dims.push_back(b.NewVar("length", VarRole::kSpatial, r.Pick<int64_t>({32, 64, 128, 256})));
  } else if (rank == 4) {
    int64_t hw = r.Pick<int64_t>({16, 24, 32, 64});
    dims.push_back(b.NewVar("height", VarRole::kSpatial, hw));
    dims.push_back(b.NewVar("width", VarRole::kSpatial, r.Chance(0.7) ? hw : hw + 8));
  } else {
    dims.push_back(b.NewVar("depth", VarRole::kSpatial, r.Pick<int64_t>({8, 12, 16})));
    int64_t hw = r.Pick<int64_t>({16, 24, 32});
    dims.push_back(b.NewVar("height", VarRole::kSpatial, hw));
    dims.push_back(b.NewVar("width", VarRole::kSpatial, hw));
  }
  return b.NewInput(dims);
}

const std::vector<OpSpec>& Ops() {
  static const std::vector<OpSpec> kOps = [] {
    std::vector<OpSpec> t;
    AddPointwiseOps(&t);
    AddReduceOps(&t);
    AddDenseOps(&t);
    AddConvOps(&t);
    AddIndexOps(&t);
    return t;
  }();
  return kOps;
}

const OpSpec* FindOp(const std::string& name) {
  static const std::map<std::string, const OpSpec*> kByName = [] {
    std::map<std::string, const OpSpec*> m;
    for (const auto& op : Ops()) m[op.name] = &op;
    return m;
  }();
  auto it = kByName.find(name);
  return it == kByName.end() ? nullptr : it->second;
}

}  // namespace kf::synth
