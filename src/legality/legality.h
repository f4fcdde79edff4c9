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
};

// Every finding is an error Diagnostic with stage "static", code the rule code (docs/RULES.md) ("H01", ...),
// line/col in the submitted text (code line k is submitted line c.first_line + k - 1; kernel
// source lines go through InlineCall line maps), excerpt that line, a message naming the rule
// and what was found, and a hint saying what is allowed instead. At most one finding per line
// and code. Returns nothing for code that does not parse (extract reports that) and does not
// look into load_inline calls it could not resolve. Sorted by line and column.
std::vector<Diagnostic> Check(const extract::Candidate& c, const LegalityOptions& opt = {});

}  // namespace kf::legality
