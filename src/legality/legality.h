// legality: the static rules. Finds, without running anything, the ways a candidate breaks the
// rules of the game (the cheats of docs/RULES.md): computing with PyTorch instead of its kernel,
// try/except fallbacks, library calls in kernel sources, side streams and threads, patching the
// timer, reading harness state, escaping the sandbox, downgrading precision.
//
// Thread-safety: Check is pure and may be called from any thread.
#pragma once

#include <vector>

#include "common/diagnostic.h"
#include "extract/extract.h"

namespace kf::legality {

struct LegalityOptions {
  // cuBLAS/cuDNN/CUTLASS/at:: or torch:: compute inside kernel sources (H04). Off: the point of
  // the exercise is writing the kernel; a job may allow libraries explicitly.
  bool allow_libraries = false;
  // The problem computes in fp32, so half/bfloat16/TF32 anywhere is a precision downgrade
  // (H13). Default true: KernelBench problems are fp32 unless the job says otherwise.
  bool fp32_problem = true;
  // CUDA graphs built and launched by the kernel sources (cudaGraph*, cuGraph*, stream capture,
  // at::cuda::CUDAGraph). Off: H07, since a graph's kernels are launched at capture time rather
  // than by the call. On (the kernelbench policy, execute::Allows): only the note H07_graph, and
  // what runs decides: fresh inputs every timed call with their outputs checked (H06, H15), the
  // wall-clock bound (H07), the ablation call (H02). Graph host nodes stay H07 (host
  // callbacks), and so do Python's graph APIs (torch.cuda.graph, CUDAGraph, ...), whose replays
  // the ablation cannot switch off and whose capture hands the block torch's own side stream.
  bool allow_graphs = false;
};

// Every finding is a Diagnostic with stage "static": an error with the rule code (docs/RULES.md)
// ("H01", ...), or an info note that ends nothing (H03_guard, H07_graph, H13_note, H17_note);
// line/col in the submitted text (code line k is submitted line c.first_line + k - 1; kernel
// source lines go through InlineCall line maps), excerpt that line, a message naming the rule
// and what was found, and a hint saying what is allowed instead. At most one finding per line
// and code. Returns nothing for code that does not parse (extract reports that) and does not
// look into load_inline calls it could not resolve. Sorted by line and column.
std::vector<Diagnostic> Check(const extract::Candidate& c, const LegalityOptions& opt = {});

}  // namespace kf::legality
