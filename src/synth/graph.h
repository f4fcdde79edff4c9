// A typed operator graph: the problem `kforge synth` writes out as Python. Internal to synth.
//
// Sizes are size variables (the problem's module globals). A tensor dimension is computed from
// them by the ops' shape rules and remembers which variables it depends on, so the generator
// knows which variables a parameter fixes (a Linear's in_features, a conv's channels) and which
// stay free: only free variables change in the problem's KFORGE_SHAPE_VARIANTS, because the judge
// sets module globals while drawing inputs, never while building the model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace kf::synth {

enum class DType : uint8_t { kF32 = 0, kBF16 = 1, kF16 = 2 };
inline constexpr uint8_t kAllDTypes = 0b111;
inline constexpr uint8_t kF32Only = 0b001;
inline constexpr uint8_t kNotF16 = 0b011;
inline uint8_t DTypeBit(DType d) { return static_cast<uint8_t>(1u << static_cast<int>(d)); }
const char* DTypeName(DType d);   // "fp32", "bf16", "fp16"
const char* TorchDType(DType d);  // "torch.float32", ...
bool DTypeFromName(const std::string& name, DType* out);

enum class VarRole : uint8_t { kBatch, kFeature, kChannel, kSpatial, kSequence, kCount };

struct SizeVar {
  std::string name;  // a module global: "batch_size", "in_features_2"
  VarRole role = VarRole::kBatch;
  int64_t value = 1;  // in the problem's main shape set
};

// One dimension of a tensor for one assignment of the size variables.
struct Dim {
  int64_t n = 0;
  uint64_t deps = 0;  // bit v: the size depends on variable v
  int var = -1;       // the variable it equals exactly, -1 when computed
};
using Shape = std::vector<Dim>;

// A tensor get_inputs() returns: randn of the graph's dtype, or int64 indices in [0, bound).
struct Input {
  std::string name;       // the forward argument: "x", "y", "idx"
  std::vector<int> dims;  // variable ids
  bool index = false;
  int bound_var = -1;  // index inputs: torch.randint(0, <this variable>, ...)
  int value = -1;
};

struct Node {
  std::string op;                       // a name in the op table
  std::vector<int> args;                // value ids, the primary operand first
  std::map<std::string, int64_t> ints;  // hyperparameters: dim, kernel, stride, heads, ...
  std::map<std::string, double> reals;  // slopes, epsilons, constants
  std::map<std::string, int> vars;      // sizes of the op's parameters: out_features -> var id
  int value = -1;
};

struct Graph {
  DType dtype = DType::kF32;
  int level = 1;
  std::vector<SizeVar> vars;
  std::vector<Input> inputs;  // get_inputs() order
  std::vector<Node> nodes;    // forward order
  // value id -> (is an input, index into inputs or nodes)
  std::vector<std::pair<bool, int>> values;
  int output = -1;  // the value forward returns
};

// Shapes of every value for one assignment of the variables, and what the parameters fix.
struct Inference {
  std::vector<Shape> shapes;  // by value id
  uint64_t bound = 0;         // variables a parameter's size depends on
};

// Runs every op's shape rule; fails (kInvalidArgument, naming the op) where one cannot apply:
// a non-positive size, mismatched operands, an index out of range.
Result<Inference> Infer(const Graph& g, const std::vector<int64_t>& var_values);
std::vector<int64_t> MainValues(const Graph& g);

// Variables no parameter fixes (bit v set): what shape variants and sizing may change.
uint64_t FreeVars(const Graph& g, const Inference& main);

// The canonical hash: ops, their hyperparameters (not sizes), the wiring (operands of
// commutative ops sorted), input ranks and kinds and the dtype; SHA-256 hex. Two graphs that
// compute the same function up to sizes and names hash equal.
std::string CanonicalHash(const Graph& g);
// The string the hash is taken of (for tests and the manifest's "graph" field).
std::string CanonicalForm(const Graph& g);

}  // namespace kf::synth
