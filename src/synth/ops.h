// The op table: what each operator accepts (ranks, dtypes), how it draws its parameters and
// operands, its shape rule, the Python it writes and its cost. Internal to synth; the table's
// entries live in ops_*.cc by family.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "synth/graph.h"
#include "synth/rng.h"

namespace kf::synth {

// Grows a graph one node at a time; keeps the main shape set's shapes up to date. Ops draw
// through it (new size variables, new inputs); a proposal that fails is rolled back whole.
class Builder {
 public:
  Builder(Graph* g, Rng* rng);
  Rng& rng() { return *rng_; }
  const Graph& graph() const { return *g_; }
  DType dtype() const { return g_->dtype; }
  const Shape& shape(int value) const { return main_.shapes[value]; }
  bool is_index(int value) const;
  // A fresh module global named `base` (or base_2, base_3, ... when taken).
  int NewVar(const std::string& base, VarRole role, int64_t value);
  // A new get_inputs() tensor of the given variables; returns its value id.
  int NewInput(const std::vector<int>& dims, const std::string& name_hint = "", bool index = false,
               int bound_var = -1);
  // Earlier float values with exactly x's shape (sizes and dependencies), x excluded.
  std::vector<int> SameShape(int x) const;
  // The variable ids of x's dims when every dim is exactly a variable; empty otherwise.
  std::vector<int> DimVars(int x) const;

  // Applies `op` to value x: its proposal, then shape inference on the main values. False (and
  // the graph unchanged) when the op cannot apply.
  bool Apply(const std::string& op, int x);
  // The value the generator continues from.
  int last() const { return g_->nodes.empty() ? -1 : g_->nodes.back().value; }

 private:
  Graph* g_;
  Rng* rng_;
  Inference main_;
};

struct Cost {
  double flops = 0;
  double bytes = 0;   // read and written by the op
  double params = 0;  // parameter elements the op owns
};

// What an op writes into the problem, its operands already named.
struct Emitted {
  std::vector<std::string> init;  // Model.__init__ lines
  std::vector<std::string> pre;   // forward statements before the result's expression
  std::string expr;               // the result
};

struct EmitCtx {
  const Graph* g = nullptr;
  std::vector<std::string> args;  // operand names, as Node::args
  std::string attr;               // a unique module attribute for the op's layer: "conv1"
  std::string tag;                // a unique suffix for the op's temporaries: "3"
  std::string var(int v) const { return g->vars[v].name; }
};

struct InferArgs {
  const std::vector<Shape>& in;        // operand shapes, as Node::args
  const std::vector<int64_t>& values;  // the variables' values
  uint64_t* bound;                     // add the dependencies a parameter fixes
  Dim Var(int v) const { return Dim{values[v], uint64_t{1} << v, v}; }
};

struct OpSpec {
  std::string name;             // "conv2d"
  std::string category;         // "activation", "reduction", "conv", ...
  std::vector<int> ranks;       // of the primary operand
  uint8_t dtypes = kAllDTypes;  // where the op makes numerical sense to ask for
  bool heavy = false;           // GEMM, conv, attention: anchors level 2; its work is FLOPs
  bool commutative = false;     // the first two operands may be swapped
  bool level1 = true;           // a problem on its own (plumbing and residual ops are not)
  // First input(s) when the op starts a graph; returns the primary value. Unset: by rank.
  std::function<int(Builder&, int rank)> start;
  // Draws parameters and extra operands for applying the op to x; false when it cannot.
  std::function<bool(Builder&, int x, Node*)> propose;
  std::function<Status(const Node&, const InferArgs&, Shape* out)> infer;
  std::function<Emitted(const Node&, const EmitCtx&)> emit;
  std::function<Cost(const Node&, const std::vector<Shape>& in, const Shape& out, int elem_bytes)>
      cost;
};

const std::vector<OpSpec>& Ops();
const OpSpec* FindOp(const std::string& name);

// Families (ops_*.cc).
void AddPointwiseOps(std::vector<OpSpec>* t);
void AddReduceOps(std::vector<OpSpec>* t);
void AddDenseOps(std::vector<OpSpec>* t);
void AddConvOps(std::vector<OpSpec>* t);
void AddIndexOps(std::vector<OpSpec>* t);

// Shared helpers for the families.
int64_t Numel(const Shape& s);
uint64_t Deps(const Shape& s);
std::string Num(double v);  // a Python literal: "0.1", "2.0"
std::string Int(int64_t v);
// A dimension index from the end as Python writes it ("-1") or from the start ("1").
int NormDim(int64_t dim, size_t rank);
// Bytes read and written by an op that touches each operand and result element once.
Cost PointwiseCost(const std::vector<Shape>& in, const Shape& out, int elem_bytes,
                   double flops_per_elem = 1);
// The default first input for a rank: (batch_size, features), (batch_size, channels, length),
// (batch_size, channels, height, width), (batch_size, channels, depth, height, width).
int StartByRank(Builder& b, int rank);

}  // namespace kf::synth
