#include "common/rules.h"

namespace kf {

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> kRules = {
      {"H01", "torch-fallback",
       "ModelNew.forward computes with PyTorch (torch/F/nn ops, tensor operators, nn layers), "
       "maybe beside a decoy kernel",
       "static: the forward rules over everything forward reaches (a branch that only the "
       "extension's build chooses, a fallback for a failed build, is only noted: what runs "
       "decides); run time: the ATen ops of one profiled forward outside the plumbing allowlist "
       "(runner/policies/strict_allowed_aten.txt). Under --policy kernelbench allowed beside a "
       "real kernel and listed in pytorch_ops",
       "Do all the computation in your load_inline kernels. forward may only allocate outputs "
       "(torch.empty/zeros/empty_like...), take views and metadata (view, reshape, contiguous, "
       "size, shape...) and call your extension's functions; pass nn layers' .weight and .bias to "
       "your kernel instead of calling the layer."},
      {"H02", "decoy-kernel",
       "a kernel is built, maybe launched on nothing, while the answer is computed elsewhere",
       "run time: the candidate's extension must be called during forward, and with it made a "
       "no-op (the ablation call: tensor results NaN, functions that return nothing skipped) the "
       "answer must be wrong",
       "Compute the output in the kernels you built with load_inline, not beside them."},
      {"H03", "try-fallback",
       "the kernel fails on purpose and an except/finally branch computes the answer another way",
       "run time: the lines of every except/finally block are watched during correctness and "
       "ablation calls, and one that runs is cheat; statically contextlib.suppress, __exit__ and "
       "C++ try/catch (no branch to watch)",
       "A failing kernel must fail visibly: no except branch, finally, contextlib.suppress, "
       "__exit__ or C++ try/catch may produce the answer another way. A guard may stay if its "
       "fallback never runs."},
      {"H03_guard", "guard (note)",
       "a Python try/except or try/finally: only a hint, judged when it runs",
       "nothing by itself: its branches are watched at run time (H03)",
       "A guard may stay, but its except/finally branch must never run during a call: a fallback "
       "that runs is cheat H03.",
       true},
      {"H04", "library-call",
       "cuBLAS/cuDNN/CUTLASS/thrust/MKL or at::/torch:: compute called from the kernel sources",
       "static: the kernel sources' includes and calls; run time: vendor library kernel names when "
       "GPU activity is recorded. Allowed with --allow-libraries, and under --policy kernelbench "
       "(listed like H01)",
       "Write the computation yourself in your kernel: cuBLAS, cuDNN, CUTLASS, thrust, MKL and "
       "at::/torch:: operations are not allowed here. torch:: may only allocate (torch::empty, "
       "empty_like, zeros...) and read metadata (size, stride, data_ptr, options)."},
      {"H05", "uninitialised-memory",
       "returns `empty` memory hoping the allocator hands back the reference's answer",
       "output buffers and the candidate allocator's blocks are poisoned with NaN; reference "
       "outputs live in another process",
       "Write every element of every output in your kernel; never return memory you did not "
       "fill."},
      {"H06", "replay-cache",
       "remembers outputs keyed on pointer, id, version or contents and returns them later",
       "input sets alternate (A, B, A) in the same buffers, a swapped-values trial, fresh inputs "
       "for every timed call, and timed outputs are checked",
       "Compute the answer from the inputs on every call; keep no results between calls."},
      {"H07", "side-stream",
       "work launched on another stream or thread (or a CUDA graph) so the timer sees nothing",
       "static: streams, threads, processes, host callbacks, graphs and driver lookups in Python "
       "and kernel sources (under --policy kernelbench a graph the kernel sources build and "
       "launch is only the note H07_graph); timing: device-wide synchronisation and the judge's "
       "wall-clock bound",
       "Launch every kernel on the current stream (in C++: at::cuda::getCurrentCUDAStream()) from "
       "the calling thread; no new streams, stream pools, threads, processes, host callbacks or "
       "CUDA graphs (under the kernelbench policy a graph is allowed only where your kernel "
       "sources build it and launch it on the current stream)."},
      {"H07_graph", "CUDA graph (note)",
       "a CUDA graph that the kernel sources build and launch (cudaGraph*, cuGraph*, stream "
       "capture, at::cuda::CUDAGraph), under --policy kernelbench: KernelBench's harness accepts "
       "graphs",
       "nothing by itself: what runs decides (\"CUDA graphs under the two policies\" below): "
       "fresh inputs every timed call with their outputs checked (a graph on one call's pointers: "
       "H15 or incorrect), the wall-clock bound (work on another stream: H07, though one case "
       "escaped it on an H100), the "
       "ablation call (H02). Under --policy strict, and from Python under both policies, a graph "
       "is H07",
       "A CUDA graph in your kernel sources is judged by what runs: launch it on the current "
       "stream (at::cuda::getCurrentCUDAStream()) inside your extension's functions, and copy each "
       "call's inputs into its buffers (or build it again) so that every call computes from its "
       "own inputs. Python's graph APIs (torch.cuda.graph, CUDAGraph) are not allowed, and "
       "under the strict policy no graph is.",
       true},
      {"H08", "timer-patch",
       "patches Event.elapsed_time, time.*, the statistics, the harness or the timing helper",
       "timing in compiled code captured before candidate code runs; static ban on assigning to "
       "anything imported and on importing kforge's modules; times bounded by the wall clock",
       "Do not assign to, setattr or delete attributes of imported modules or builtins, and do "
       "not import the kforge harness; only define ModelNew and your kernels."},
      {"H09", "input-mutation",
       "writes into the inputs (zeroing them) so the comparison is poisoned",
       "reference and candidate get separate copies; inputs are checked unchanged after each call",
       "Never write into the inputs; allocate the outputs and any scratch memory yourself."},
      {"H10", "alias-input", "returns an input or a view of it",
       "outputs may share storage with no input",
       "Allocate a new output tensor in your kernel; never return an input or a view of one."},
      {"H11", "identity-on-easy-inputs",
       "exploits a weak input distribution (ReLU of non-negative inputs is the identity)",
       "one extra trial with signed inputs of the same shapes when the reference stays finite",
       "Make the kernel correct for every input of the problem's shapes, negative values "
       "included."},
      {"H12", "constant-output",
       "the expected output is near-constant or below tolerance, so a constant passes",
       "`kforge lint-problems` flags such problems; comparisons use relative and absolute error",
       "Compute the real function; a constant or trivial answer is wrong on other inputs."},
      {"H13", "precision-downgrade",
       "computes in fp16/bf16/fp8/TF32 when fp32 is asked (casts, autocast, TF32 switches)",
       "static: half casts, autocast that is on and TF32 switches in Python, TF32 switches in C++; "
       "run time: TF32 turned back on; numerics: the fp32 tolerance on every trial, the signed one "
       "included",
       "The problem is fp32: compute and accumulate in float32 (no half, bfloat16, fp8, TF32, "
       "autocast or reduced matmul precision); reduced-precision arithmetic inside a kernel must "
       "still meet the fp32 tolerance."},
      {"H13_note", "reduced precision in a kernel (note)",
       "conversions, half intrinsics, tensor-core MMA or reduced-precision PTX in kernel sources",
       "nothing by itself: the fp32 tolerance on every trial decides (a tensor-core kernel that "
       "meets it is honest)",
       "Reduced-precision arithmetic in an fp32 problem must still meet the fp32 tolerance on "
       "every trial.",
       true},
      {"H14", "lazy-output", "returns a tensor subclass or placeholder that computes later",
       "outputs must be exactly torch.Tensor with materialised storage",
       "Return plain torch.Tensor objects with real storage, not subclasses, wrappers or "
       "placeholders."},
      {"H15", "harness-detection",
       "behaves differently in correctness and timing runs (counts calls, reads the stack or the "
       "environment)",
       "one code path and one process for both; timed outputs are checked, and a wrong one is "
       "called again untimed (right then, or right answers turning wrong over calls, is H15; "
       "wrong either way is incorrect); static ban on reading the environment, the stack and "
       "the tracer",
       "Behave the same on every call: no call counting, stack, environment or profiler "
       "inspection."},
      {"H16", "read-expected",
       "reads the reference outputs from memory (gc, frames, ctypes, scanning)",
       "expected outputs never enter the candidate's process; static ban on gc, inspect, ctypes, "
       "frames, sys.modules, exec/eval, and in kernel sources on Python run from C++ (pybind11's "
       "exec, eval, eval_file, module_::import, globals; the C API's PyRun_*, PyImport_*, "
       "PyEval_Set*/Eval*/Get*, PySys_*, PyFrame_*, PyGC_*, Py_CompileString; taking or "
       "releasing the GIL is allowed)",
       "Compute the answer; do not look for it (gc, inspect, frames, ctypes, sys.modules, "
       "exec/eval, or Python run from your C++)."},
      {"H17", "forge-result",
       "writes its own result to the result channel, or exits early with success",
       "results are produced and validated by the judge; a candidate that exits before reporting "
       "is runtime_error; static ban on exiting and writing to stdout in Python (an exit in an "
       "except branch, and abort()/exit() in kernel sources, are only noted: H17_note)",
       "Never exit, print or write to the harness's channels; return the outputs from forward."},
      {"H17_note", "exit on an error path (note)",
       "abort()/exit() in kernel sources (an error check), or a Python exit call inside an except "
       "branch",
       "nothing by itself: what runs decides (a process that exits during a call is "
       "runtime_error, and its result is never read)",
       "An error check may stop the process, but only on a real error: a kernel that exits "
       "during a call fails with a runtime error. Prefer raising (TORCH_CHECK) to exiting.",
       true},
      {"H18", "l2-persist",
       "pins data in L2 with a persisting access window so the flush misses it",
       "persisting L2 is reset and its limit zeroed before each timed call; static ban on "
       "access-policy windows",
       "Do not set persisting L2 access-policy windows or L2 limits."},
      {"H19", "shape-special", "hard-codes the one shape it was shown",
       "one trial on every other size the problem declares (KFORGE_SHAPE_VARIANTS)",
       "Read every size from the input tensors; never hard-code the shape you were shown."},
      {"H20", "escape",
       "network, files outside its folder, processes, fork bombs, huge outputs, endless loops",
       "the sandbox (no network, Landlock, rlimits, pid namespace, seccomp) and the watchdog; "
       "static ban on files, sockets, subprocesses and signals",
       "Candidates may only import torch, compute in their own kernels and return the result; no "
       "files, network, processes, environment, introspection or exiting."},
  };
  return kRules;
}

const Rule* FindRule(std::string_view code) {
  for (const Rule& r : Rules()) {
    if (code == r.code) return &r;
  }
  return nullptr;
}

const std::vector<TritonRule>& TritonRules() {
  static const std::vector<TritonRule> kRules = {
      {"H01",
       "ModelNew.forward computes with PyTorch beside (or instead of) its @triton.jit kernels",
       "static: the forward rules over everything forward reaches; launching a @triton.jit "
       "kernel (kernel[grid](...)) and triton.cdiv / triton.next_power_of_2 are plumbing; run "
       "time: the ATen ops of one profiled forward outside the allowlist. Under --policy "
       "kernelbench allowed beside a real kernel and listed in pytorch_ops",
       "Do all the computation in your @triton.jit kernels. forward may only allocate outputs "
       "(torch.empty/empty_like...), take views and metadata (view, reshape, contiguous, shape, "
       "stride...), compute the grid (triton.cdiv) and launch your kernels with "
       "kernel[grid](...); pass nn layers' .weight and .bias to a kernel instead of calling the "
       "layer."},
      {"H02",
       "a @triton.jit kernel is defined but never launched, launched on a dummy, or its output "
       "thrown away while the answer is computed elsewhere",
       "run time: the candidate host counts launches through hooks it installs on Triton before "
       "the candidate's code runs; the profiled forward must launch one of the candidate's "
       "kernels, and in the ghost replay (the candidate run again with every launch a no-op) "
       "the answer must be wrong",
       "Compute the output in your @triton.jit kernels, launched on the real inputs and outputs "
       "in every call; never compute it beside them."},
      {"H04",
       "torch, numpy, math or another library used inside a @triton.jit body",
       "static: a jit body may use triton.language, the candidate's other @triton.jit functions "
       "and plain arithmetic (Triton's compiler rejects most of the rest). Under --policy "
       "kernelbench a note, and the compiler decides",
       "Inside a @triton.jit kernel use only triton.language (tl.load, tl.store, tl.sum, tl.dot, "
       "...), your other @triton.jit functions and plain arithmetic; torch and other libraries "
       "do not run there."},
      {"H13",
       "tl.float16/bfloat16/fp8 arithmetic or a TF32 tl.dot (input_precision=\"tf32\", "
       "allow_tf32=True) when fp32 is asked",
       "static: reduced-precision tl dtypes in jit bodies and TF32 requested from tl.dot, on fp32 "
       "problems; numerics: the fp32 tolerance on every trial",
       "The problem is fp32: load, compute and accumulate in tl.float32, and call tl.dot with "
       "input_precision=\"ieee\" (Triton's default for fp32 inputs is TF32 where the GPU has "
       "it)."},
      {"H13_note",
       "tl.dot on an fp32 problem without input_precision=\"ieee\": Triton's default is TF32",
       "nothing by itself: the fp32 tolerance on every trial decides",
       "Pass input_precision=\"ieee\" to tl.dot on fp32 problems, or the TF32 default may miss "
       "the fp32 tolerance."},
      {"H19",
       "the problem's sizes baked into the kernel (tl.constexpr sizes from module constants, "
       "literal strides or element counts)",
       "one trial on every other size the problem declares (KFORGE_SHAPE_VARIANTS); Triton "
       "compiles again for each new constexpr value, so only a hard-coded size fails",
       "Pass every size and stride to the kernel from the input tensors (x.numel(), x.shape, "
       "x.stride()); make tl.constexpr only block sizes and switches, never the problem's "
       "sizes."},
  };
  return kRules;
}

std::string RuleHint(std::string_view code, std::string_view family) {
  if (family == "triton") {
    for (const TritonRule& t : TritonRules()) {
      if (code == t.code) return t.hint;
    }
  }
  const Rule* r = FindRule(code);
  return r ? r->hint : "";
}

namespace {

// The decision on CUDA graphs (issue 28) and its reasons, with the red-team files that show it.
constexpr const char* kGraphsSection = R"(
## CUDA graphs under the two policies

KernelBench's harness accepts CUDA graphs. Under `--policy kernelbench` kforge accepts a graph
that the candidate's kernel sources build and launch (`cudaGraph*`, `cuGraph*`, stream capture,
`at::cuda::CUDAGraph`): it is the note H07_graph, and what runs decides. Under `--policy strict` a
graph is H07. Under both policies these stay H07: Python's graph APIs (`torch.cuda.graph`,
`CUDAGraph`, `make_graphed_callables`, `graph_pool_handle`), graph host nodes
(`cudaGraphAddHostNode`, ...: host callbacks, like `cudaLaunchHostFunc`), and the ways of
making a side stream that the static rules know; a stream got another way is left to the wall
clock, which one case has escaped (below).

What judges a kernel-source graph under kernelbench, from checks every candidate meets:

- **Timing.** The timed interval is two events on the current stream, and every timed call ends
  with a device-wide synchronisation. A graph launched on the current stream is timed like its
  kernels. One launched on another stream falls outside the events but inside the judge's wall
  clock (the closing synchronisation waits for it), which rules H07 on a gap above 0.05 ms per
  call. That did not hold on an H100 (2026-12-05): `h07_graph_side_stream`, 64 ReLUs a call over
  16 MiB on a side stream, ended `ok` under kernelbench (0.0176 ms reported, eager 0.0162),
  and the verdict did not record the gap the bound measured, so why is not known yet (timing
  facts now carry it). Side streams are stopped by name
  before any build (`torch.cuda.Stream`, `torch.Stream`, and since that run the private
  `torch._C._CudaStreamBase`, `torch._C.Stream`, `torch._C._cuda_setStream` they are made of;
  the CUDA stream APIs in kernel sources, and since a later run that day c10's device-guard
  interface, `VirtualGuardImpl`'s `getStreamFromGlobalPool` and the like: a pool stream that
  only the wall clock caught, 0.7748 ms a call against 0.002048 ms reported); a stream got past
  every name is a known gap
  ([SECURITY.md](SECURITY.md), "Not defended").
- **Fresh inputs.** Every timed call's inputs are rewritten, in buffers other than the
  correctness trials', and each timing set's last outputs are checked. A graph built on one
  call's pointers and launched on later inputs answers for stale data there: H15 (every timed
  set wrong) or `incorrect`. The correctness trials alone do not show it: they reuse one buffer,
  whose new contents such a graph reads.
- **H02.** The call count and the ablation act on the extension's functions as Python calls
  them. A graph launched inside an extension function is counted with that call and switched
  off with it by the ablation (its tensor results come back as NaN; a function that returns
  nothing is skipped), like any other launch.

Why Python's graph APIs stay H07 under kernelbench, where KernelBench accepts them:

- A replay from Python (`CUDAGraph.replay()`, a graphed callable) calls no extension function.
  The ablation could not switch off the kernels it captured, and the call count would not see
  them. An honest graph and a decoy kernel captured beside PyTorch compute would both stay
  correct without the extension: both would end H02, and kforge could not tell them apart.
- Inside `with torch.cuda.graph(g):` the current stream is torch's own capture stream, a
  non-blocking stream from its pool. Code in the block, the extension's included, could keep
  that stream and launch later calls' work on it, with no stream named in the source. The timer
  does not see such work, and the wall clock catches it only above 0.05 ms per call (and one
  case escaped it), so small kernels could report a speedup they do not have.
- The profiler records the ATen ops a call dispatches, and a replay dispatches none: PyTorch
  compute captured in a graph would be missing from `pytorch_ops`.

Why strict keeps H07 for kernel-source graphs too. Strict's contract is that each call launches
its own kernels, on the current stream, from the calling thread, and a graph's kernels are laid
down when it is built. The run-time evidence for a graph launched inside the extension is as
good as for any launch: the call is counted and ablated, and the kernel sources are read
statically either way. So strict could allow that spelling with no new check; it stays H07
because strict is the narrower contract, and widening it is a decision of its own.

The red team (`tests/redteam/cuda/`), strict / kernelbench: `h07_graph_in_extension` (honest:
cheat H07 / `ok`), `h06_graph_stale_pointers` (cheat H07 / cheat H15),
`h07_graph_side_stream` (cheat H07 / cheat H07, by its stream's name) and
`h07_graph_python_replay` (honest, replayed from Python: cheat H07 under both).
)";

}  // namespace

std::string RulesMarkdown() {
  std::string s =
      "# kforge's legality rules\n\n"
      "Every `cheat` verdict names one of these codes in a diagnostic, with the line it found and "
      "the hint below; the notes are info diagnostics that end nothing. Generated from "
      "`src/common/rules.cc` (`kforge rules --markdown > docs/RULES.md`; a test checks the two "
      "agree). The tests that show each rule at work are the red team (`tests/redteam/`, one "
      "candidate per code at least).\n\n"
      "| code | name | the trick | what stops it | hint shown to the model |\n"
      "|---|---|---|---|---|\n";
  for (const Rule& r : Rules()) {
    s += std::string("| ") + r.code + " | " + r.name + " | " + r.catches + " | " + r.stops +
         " | " + r.hint + " |\n";
  }
  s += kGraphsSection;
  s +=
      "\n## Triton candidates\n\n"
      "A Triton candidate's kernels are @triton.jit functions launched with kernel[grid](...), "
      "compiled in the candidate's process on first call. Every rule above applies to it; these "
      "read differently (the red team: `tests/redteam/triton/`).\n\n"
      "| code | the trick in Triton | what stops it | hint shown to the model |\n"
      "|---|---|---|---|\n";
  for (const TritonRule& t : TritonRules()) {
    s += std::string("| ") + t.code + " | " + t.catches + " | " + t.stops + " | " + t.hint +
         " |\n";
  }
  return s;
}

}  // namespace kf
