#include "synth/graph.h"

#include <algorithm>

#include "common/hash.h"
#include "synth/ops.h"

namespace kf::synth {

const char* DTypeName(DType d) {
  switch (d) {
    case DType::kF32:
      return "fp32";
    case DType::kBF16:
      return "bf16";
    case DType::kF16:
      return "fp16";
  }
  return "fp32";
}

const char* TorchDType(DType d) {
  switch (d) {
    case DType::kF32:
      return "torch.float32";
    case DType::kBF16:
      return "torch.bfloat16";
    case DType::kF16:
      return "torch.float16";
  }
  return "torch.float32";
}

bool DTypeFromName(const std::string& name, DType* out) {
  for (DType d : {DType::kF32, DType::kBF16, DType::kF16}) {
    if (name == DTypeName(d)) {
      *out = d;
      return true;
    }
  }
  return false;
}

std::vector<int64_t> MainValues(const Graph& g) {
  std::vector<int64_t> v;
  for (const auto& s : g.vars) v.push_back(s.value);
  return v;
}

Result<Inference> Infer(const Graph& g, const std::vector<int64_t>& values) {
  Inference inf;
  inf.shapes.resize(g.values.size());
  for (const auto& in : g.inputs) {
    Shape s;
    for (int v : in.dims) {
      if (values[v] < 1) return Status::Invalid(g.vars[v].name + " must be at least 1");
      s.push_back(Dim{values[v], uint64_t{1} << v, v});
    }
    if (in.index && values[in.bound_var] < 1) {
      return Status::Invalid("index bound " + g.vars[in.bound_var].name + " must be at least 1");
    }
    inf.shapes[in.value] = std::move(s);
  }
  for (const auto& n : g.nodes) {
    const OpSpec* spec = FindOp(n.op);
    if (spec == nullptr) return Status::Invalid("unknown op " + n.op);
    std::vector<Shape> in;
    for (int a : n.args) in.push_back(inf.shapes[a]);
    Shape out;
    Status s = spec->infer(n, InferArgs{in, values, &inf.bound}, &out);
    if (!s.ok()) return Status::Invalid(n.op + ": " + s.message());
    for (const auto& d : out) {
      if (d.n < 1) return Status::Invalid(n.op + ": a dimension of size " + std::to_string(d.n));
    }
    inf.shapes[n.value] = std::move(out);
  }
  return inf;
}

uint64_t FreeVars(const Graph& g, const Inference& main) {
  uint64_t all = g.vars.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << g.vars.size()) - 1;
  uint64_t fixed = main.bound;
  for (const auto& n : g.nodes) {
    for (const auto& [name, v] : n.vars) fixed |= uint64_t{1} << v;
  }
  return all & ~fixed;
}

namespace {

// The canonical text of value v: its op, hyperparameters and operands, recursively. Inputs
// are named by kind, rank and position.
std::string Canon(const Graph& g, int v) {
  auto [is_input, idx] = g.values[v];
  if (is_input) {
    const Input& in = g.inputs[idx];
    return std::string(in.index ? "idx" : "in") + std::to_string(idx) + "r" +
           std::to_string(in.dims.size());
  }
  const Node& n = g.nodes[idx];
  std::string s = n.op + "{";
  for (const auto& [k, x] : n.ints) s += k + "=" + std::to_string(x) + ",";
  for (const auto& [k, x] : n.reals) s += k + "=" + Num(x) + ",";
  s += "}(";
  std::vector<std::string> args;
  for (int a : n.args) args.push_back(Canon(g, a));
  const OpSpec* spec = FindOp(n.op);
  if (spec != nullptr && spec->commutative && args.size() >= 2) {
    std::sort(args.begin(), args.begin() + 2);
  }
  for (size_t i = 0; i < args.size(); ++i) s += (i ? "," : "") + args[i];
  return s + ")";
}

}  // namespace

std::string CanonicalForm(const Graph& g) {
  return std::string(DTypeName(g.dtype)) + ":" + (g.output < 0 ? "" : Canon(g, g.output));
}

std::string CanonicalHash(const Graph& g) { return Sha256Hex(CanonicalForm(g)); }

}  // namespace kf::synth
