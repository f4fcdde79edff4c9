// The tables behind the static rules: which Python names and C++ identifiers break which rule.
// Internal to legality.
//
// One rule code (docs/RULES.md) per family, so a model sees one stable code for one kind of mistake
// (Python side / kernel-source side):
//   H01 torch-fallback: torch/F/nn compute, tensor operators and nn layer calls reached from
//       ModelNew.forward; getattr/__dict__/vars() on torch (evasion) / -
//   H03 try-fallback: try/except, contextlib.suppress, __exit__ / try-catch
//   H04 library-call: - / cuBLAS, cuDNN, CUTLASS, thrust, MKL, at::/torch:: compute, Tensor
//       operators and compute methods, dlopen
//   H07 side-stream: threading, multiprocessing, asyncio, os.fork, torch.cuda.Stream/stream/
//       set_stream, CUDA graphs / cudaStreamCreate*, std::thread, pthread, std::async, fork,
//       host callbacks, CUDA graphs, stream pools (kernel-source graphs: the note H07_graph
//       where the job allows them)
//   H08 timer-patch: assigning/setattr/delattr on anything imported, builtins, importing
//       kforge_runner/kforge_native / -
//   H13 precision-downgrade: half/bfloat16/fp8 dtypes, .half(), autocast, allow_tf32,
//       set_float32_matmul_precision / __half, __nv_bfloat16, wmma, cuda_fp16.h, f16/tf32 PTX
//   H15 harness-detection: os.environ/getenv, sys.argv, traceback, profiler state / getenv
//   H16 read-expected: gc, inspect, ctypes, importlib, pickle, frames, sys.modules,
//       exec/eval/compile/__import__, globals()/locals()/vars() / -
//   H17 forge-result: sys.exit, os._exit, atexit, sys.stdout / exit, abort
//   H18 l2-persist: - / persisting L2 access-policy windows
//   H20 escape: open, io, pathlib, socket, http, subprocess, os.system/popen/exec*/spawn*,
//       shutil, tempfile, signal, file probes / fopen, fstream, system, popen, exec*
#pragma once

#include <string>
#include <string_view>

namespace kf::legality {

// A name that breaks a rule: the rule code (docs/RULES.md) and a short description for the message.
struct Banned {
  const char* code = nullptr;  // nullptr: not banned
  const char* what = "";
  // A CUDA graph API (H07 under every policy from Python; the message says where graphs are
  // allowed).
  bool graph = false;
  explicit operator bool() const { return code != nullptr; }
};

// A fully qualified Python path ("os.environ", "torch.cuda.Stream") that is banned anywhere in
// the candidate, whether called or merely referenced. Matches whole leading components, so
// "threading" bans "threading.Thread" too. `fp32_problem` enables the H13 entries.
Banned BannedPythonPath(std::string_view path, bool fp32_problem);

// A builtin (a bare name the candidate does not bind itself) that is banned: open, exec, ...
Banned BannedBuiltin(std::string_view name);

// Whether the dotted `path` is `prefix` or lies under it: "os.path" matches "os", "osx" not.
bool MatchesPrefix(std::string_view path, std::string_view prefix);

// Functions under torch.* that allocate, view, copy or report metadata: allowed in forward.
// `path` is canonical ("torch.empty_like", "torch.cuda.synchronize").
bool AllowedTorchPath(std::string_view path);

// Names of torch functions and Tensor methods that compute (relu, matmul, sum, add_, ...).
// Trailing '_' (in-place) and surrounding "__" (dunders) are ignored.
bool IsComputeName(std::string_view name);

// Tensor attributes and methods that return metadata (size, shape, numel, ...), not a tensor.
bool IsMetadataName(std::string_view name);

// Methods of an nn.Module that do not run it (parameters(), named_buffers(), ...).
bool IsModuleBookkeeping(std::string_view name);

}  // namespace kf::legality
