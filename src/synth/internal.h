// What synth's files share: drawing a graph, sizing it, writing it as Python. Internal to synth
// (and its tests).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "synth/graph.h"
#include "synth/rng.h"
#include "synth/synth.h"

namespace kf::synth {

// ---- drawing -----------------------------------------------------------------------------
struct DrawOptions {
  int level = 1;
  DType dtype = DType::kF32;
  std::vector<std::string> ops;  // allowed ops; empty: all
  std::string only;              // a single-op graph of exactly this op (calibration probes)
};
// A random graph for the level: 1 op (level 1); an anchor (GEMM, conv, attention) and 1-4
// ops after it (level 2); 5-8 ops with at least two anchors and a skip connection (level 3).
// kInvalidArgument when the allowed ops cannot make one.
Result<Graph> DrawGraph(const DrawOptions& opt, Rng& rng);
// The ops of the graph in forward order: "conv2d", "relu", ...
std::vector<std::string> OpNames(const Graph& g);

// ---- sizing ------------------------------------------------------------------------------
// The calibration's name for an op's curve in a dtype: "relu", "relu@bf16".
std::string CurveKey(const std::string& op, DType dtype);
double PredictMs(const Graph& g, const Inference& inf, const Calibration& cal);
// Inputs, every intermediate value and the parameters, in bytes: an upper bound of what eager
// PyTorch holds at once.
double PeakBytes(const Graph& g, const Inference& inf);
// Sets the free variables (biggest first: batch, sequence, spatial, ...) on a ladder of round
// sizes (1, 2, 3, 4, 6, 8, 12, ...) until the predicted time is within 20% of target_ms or no
// variable can move without passing max_bytes. Fails when the graph itself does not infer.
Status SizeGraph(Graph* g, double target_ms, double max_bytes, const Calibration& cal);

// Values of the free variables, per shape variant.
using Variant = std::map<int, int64_t>;
// Up to `count` variants, each changing at least one free variable to an odd size 0.5-1.5x
// its main value, valid under every op's shape rule and under max_bytes; fewer when the graph
// has no free variable or none can be found.
std::vector<Variant> DrawVariants(const Graph& g, int count, double max_bytes, Rng& rng);
std::vector<int64_t> ValuesOf(const Graph& g, const Variant& v);

// ---- writing -----------------------------------------------------------------------------
// The problem file: docstring, module globals (main sizes, dtype, KFORGE_SHAPE_VARIANTS),
// class Model, get_inputs, get_init_inputs.
std::string EmitProblem(const Graph& g, const std::vector<Variant>& variants,
                        const std::string& docstring);
// The manifest's description of a graph (inputs, nodes with parameters, output).
nlohmann::json GraphJson(const Graph& g);

}  // namespace kf::synth
