// Rules over the C++/CUDA sources of every resolved load_inline call: library compute (H04),
// side streams, threads and CUDA graphs (H07; graphs are only noted where the job allows them:
// H07_graph), reduced precision (H13), try/catch (H03), persisting L2 windows (H18) and escapes
// (H15 H20); exits (abort/exit: error checks) are only noted (H17_note). Unresolved calls are
// not seen here; the run-time checks cover them.
#include <set>
#include <string>

#include "common/rules.h"
#include "legality/context.h"
#include "legality/cpp_lexer.h"
#include "legality/names.h"

namespace kf::legality {
namespace {

using K = CppToken::Kind;

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string::npos; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
std::string Last(const std::string& q) {
  const size_t c = q.rfind("::");
  return c == std::string::npos ? q : q.substr(c + 2);
}

// at::/torch:: functions that allocate or describe, never compute.
bool AllowedAten(const std::string& q) {
  static const std::set<std::string> kAllowed = {"empty",
                                                 "empty_like",
                                                 "empty_strided",
                                                 "zeros",
                                                 "zeros_like",
                                                 "ones",
                                                 "ones_like",
                                                 "full",
                                                 "full_like",
                                                 "from_blob",
                                                 "arange",
                                                 "tensor",
                                                 "scalar_tensor",
                                                 "TensorOptions",
                                                 "dtype",
                                                 "device",
                                                 "requires_grad",
                                                 "layout",
                                                 "IntArrayRef",
                                                 "Scalar",
                                                 "Device",
                                                 "DeviceGuard",
                                                 "NoGradGuard",
                                                 "InferenceMode",
                                                 "AutoDispatchBelowADInplaceOrView",
                                                 "parallel_for",
                                                 "get_num_threads",
                                                 "get_thread_num",
                                                 "in_parallel_region",
                                                 "getCurrentCUDAStream",
                                                 "getDefaultCUDAStream",
                                                 "getCurrentDeviceProperties",
                                                 "getDeviceProperties",
                                                 "CUDAGuard",
                                                 "OptionalCUDAGuard",
                                                 "current_device",
                                                 "device_count",
                                                 "ScalarType",
                                                 "toString",
                                                 "elementSize",
                                                 "ceil_div",
                                                 "divup",
                                                 "checkAllSameGPU",
                                                 "checkContiguous",
                                                 "checkDim",
                                                 "TensorArg",
                                                 "Tensor",
                                                 "isFloatingType",
                                                 "typeMetaToScalarType",
                                                 "MemoryFormat",
                                                 "CUDAStreamGuard",
                                                 "OptionalDeviceGuard",
                                                 "make_optional",
                                                 "optional",
                                                 "ArrayRef",
                                                 "SmallVector",
                                                 "irange",
                                                 "str"};
  return kAllowed.count(Last(q)) > 0 || (Last(q).size() > 1 && Last(q)[0] == 'k');
}

// CUDA graphs, built, captured, instantiated or launched: the runtime's cudaGraph* and the
// driver's cuGraph* (not the graphics-interop cudaGraphics*/cuGraphics*), stream capture, and
// ATen's C++ graph (at::cuda::CUDAGraph). H07, or the note H07_graph where the job allows graphs
// (Context::ReportKernelGraph). A graph's host nodes are host callbacks: IsGraphHostNode.
bool IsGraph(const std::string& last) {
  static const std::set<std::string> kCapture = {"cudaStreamBeginCapture",
                                                 "cudaStreamBeginCaptureToGraph",
                                                 "cudaStreamEndCapture",
                                                 "cuStreamBeginCapture",
                                                 "cuStreamBeginCapture_v2",
                                                 "cuStreamBeginCaptureToGraph",
                                                 "cuStreamEndCapture",
                                                 "cudaThreadExchangeStreamCaptureMode",
                                                 "cuThreadExchangeStreamCaptureMode",
                                                 "CUDAGraph"};
  if (StartsWith(last, "cudaGraphics") || StartsWith(last, "cuGraphics")) return false;
  return StartsWith(last, "cudaGraph") || StartsWith(last, "cuGraph") || kCapture.count(last) > 0;
}
// A host node runs a host function in the graph's order, as cudaLaunchHostFunc does on a
// stream: H07 under every policy.
bool IsGraphHostNode(const std::string& last) {
  return IsGraph(last) && Contains(last, "HostNode");
}

class SourceRules {
 public:
  SourceRules(Context& ctx, const extract::InlineCall& call, const extract::SourceText& src)
      : ctx_(ctx), call_(call), src_(src), t_(LexCpp(src.text)) {}

  void Run() {
    for (int i = 0; i < static_cast<int>(t_.size()); ++i) At(i);
    TensorArithmetic();
  }

 private:
  void Flag(const char* code, int i, const std::string& what) {
    if (code == std::string("H04") && ctx_.opt().allow_libraries) return;
    if (code == std::string("H13") && !ctx_.opt().fp32_problem) return;
    ctx_.ReportSubmitted(code, SubmittedLine(i), t_[i].col,
                         "kernel source " + what + " is not allowed (" + code + ")", RuleHint(code));
  }
  // Reduced-precision arithmetic in a kernel (conversions, half intrinsics, tensor-core MMA,
  // reduced-precision PTX) is not proof of a downgrade: a tensor-core kernel that meets the fp32
  // tolerance is honest, and one that does not fails the trials. Noted, not a finding.
  void NotePrecision(int i, const std::string& what) {
    if (!ctx_.opt().fp32_problem) return;
    ctx_.ReportSubmitted("H13_note", SubmittedLine(i), t_[i].col,
                         "kernel source " + what +
                             " (reduced precision in an fp32 problem: the "
                             "fp32 tolerance on every trial decides)",
                         RuleHint("H13_note"), Severity::kInfo);
  }
  int SubmittedLine(int i) const {
    const int l = t_[i].line;
    return l >= 1 && l <= static_cast<int>(src_.line_map.size()) && src_.line_map[l - 1]
               ? src_.line_map[l - 1]
               : call_.line;
  }
  bool Is(int i, std::string_view p) const {
    return i >= 0 && i < static_cast<int>(t_.size()) && t_[i].kind == K::kPunct && t_[i].text == p;
  }
  bool IdentIs(int i) const {
    return i >= 0 && i < static_cast<int>(t_.size()) && t_[i].kind == K::kIdent;
  }
  // `name(` or `name<...>(`.
  bool Called(int i) const {
    if (Is(i + 1, "(")) return true;
    if (!Is(i + 1, "<")) return false;
    int depth = 0;
    for (int k = i + 1; k < static_cast<int>(t_.size()) && k < i + 40; ++k) {
      if (Is(k, "<")) ++depth;
      if (Is(k, ">")) --depth;
      if (Is(k, ">>")) depth -= 2;
      if (depth <= 0) return Is(k + 1, "(");
    }
    return false;
  }

  void At(int i) {
    const CppToken& tk = t_[i];
    if (tk.kind == K::kInclude) return Include(i);
    if (tk.kind == K::kString) {
      for (const char* p : {".f16", ".bf16", ".tf32", ".e4m3", ".e5m2", ".f16x2"}) {
        if (Contains(tk.text, p))
          return NotePrecision(i, "has PTX on reduced-precision types (" + std::string(p) + ")");
      }
      return;
    }
    if (tk.kind == K::kPunct && (tk.text == "." || tk.text == "->") && IdentIs(i + 1) &&
        Called(i + 1) && IsComputeName(t_[i + 1].text) && !Contains(t_[i + 1].text, "::")) {
      return Flag("H04", i + 1, "calls the tensor method ." + t_[i + 1].text + "()");
    }
    if (tk.kind != K::kIdent) return;
    const std::string& q = tk.text;
    const std::string last = Last(q);
    const bool call = Called(i);
    // H04: libraries.
    for (const char* p : {"cublas",
                          "cudnn",
                          "cusparse",
                          "cufft",
                          "cusolver",
                          "cblas_",
                          "mkl_",
                          "dnnl",
                          "mkldnn",
                          "cutlass::",
                          "cute::",
                          "thrust::",
                          "cub::Device",
                          "Eigen::",
                          "at::native::",
                          "at::cuda::blas",
                          "torch::nn::",
                          "at::cpu::",
                          "at::cuda::cublas",
                          "at::_ops::"}) {
      if (StartsWith(q, p) || StartsWith(last, p)) return Flag("H04", i, "uses " + q);
    }
    if (Contains(q, "BlasHandle") || Contains(q, "BlasLtHandle") || q == "dlopen" || q == "dlsym") {
      return Flag("H04", i, "uses " + q);
    }
    // H07: other streams, threads, graphs.
    static const std::set<std::string> kThreads = {"cudaStreamCreate",
                                                   "cudaStreamCreateWithFlags",
                                                   "cudaStreamCreateWithPriority",
                                                   "std::thread",
                                                   "std::jthread",
                                                   "std::async",
                                                   "pthread_create",
                                                   "cudaLaunchHostFunc",
                                                   "cuLaunchHostFunc",
                                                   "cudaStreamAddCallback",
                                                   "cudaStreamPerThread",
                                                   "getStreamFromPool",
                                                   "setCurrentCUDAStream",
                                                   "cuStreamCreate"};
    // Driver functions looked up by name (the name a string the rules cannot read) reach
    // stream creation and every other driver call around the rules above: found on the H200
    // with a cuStreamCreate whose work the timed stream never saw.
    static const std::set<std::string> kByName = {"cudaGetDriverEntryPoint",
                                                  "cudaGetDriverEntryPointByVersion",
                                                  "cuGetProcAddress", "cuGetProcAddress_v2"};
    // c10's device-guard interface hands out the same pool and new streams as
    // getStreamFromPool, and exchangeStream switches the current stream as setCurrentCUDAStream
    // does. Found on an H100 (2026-12-05): a VirtualGuardImpl's getStreamFromGlobalPool stream,
    // its 64 ReLUs a call seen only by the wall clock.
    static const std::set<std::string> kGuardStreams = {"getStreamFromGlobalPool",
                                                        "getNewStream",
                                                        "exchangeStream",
                                                        "VirtualGuardImpl",
                                                        "getDeviceGuardImpl",
                                                        "DeviceGuardImplInterface",
                                                        "device_guard_impl_registry",
                                                        "DeviceGuardImplRegistrar",
                                                        "C10_REGISTER_GUARD_IMPL",
                                                        "CUDAGuardImpl"};
    if (kGuardStreams.count(last)) {
      return Flag("H07", i, "uses " + q + " (streams through c10's device-guard interface)");
    }
    // The same pool streams rebuilt from their ids (the id says pool and index).
    if (last == "unpack3" || EndsWith(q, "Stream::unpack") || EndsWith(q, "Stream::UNSAFE")) {
      return Flag("H07", i, "uses " + q + " (a stream rebuilt from its id)");
    }
    if (kByName.count(last))
      return Flag("H07", i, "uses " + q + ", a driver function looked up by name,");
    if (IsGraphHostNode(last)) return Flag("H07", i, "uses " + q + " (a host callback)");
    if (IsGraph(last)) {
      return ctx_.ReportKernelGraph(SubmittedLine(i), t_[i].col, "kernel source uses " + q);
    }
    if (kThreads.count(q) || kThreads.count(last) || ((q == "fork" || q == "vfork") && call)) {
      return Flag("H07", i, "uses " + q);
    }
    // H13. Half and bfloat16 *types* are not proof: dtype-generic kernels name them in paths
    // an fp32 problem never takes, and a downgrade that runs shows in the fp32 tolerance on
    // the signed-input trial. Conversions and tensor-core MMA are noted (NotePrecision); the
    // switches that make PyTorch's own fp32 math reduced (TF32 for cuBLAS/cuDNN) stay errors.
    static const std::set<std::string> kHalfTypes = {
        "__half",         "__half2",     "half2",        "__nv_half", "__nv_half2", "__nv_bfloat16",
        "__nv_bfloat162", "nv_bfloat16", "nv_bfloat162", "__fp16",    "_Float16",   "__bf16",
        "half_t",         "bfloat16_t",  "BFloat16",     "kHalf",     "kFloat16",   "kBFloat16"};
    if (kHalfTypes.count(last) || (last == "Half" && q != "Half") || HalfWord(i)) return;
    static const std::set<std::string> kSwitches = {
        "setAllowTF32CuBLAS", "setAllowTF32CuDNN", "setFloat32MatmulPrecision",
        "setAllowFP16ReductionCuBLAS", "setAllowBF16ReductionCuBLAS"};
    if (kSwitches.count(last)) return Flag("H13", i, "uses " + q);
    if (last == "tfloat32_t" || last == "__float_to_tf32" || last == "wmma" ||
        Contains(q, "wmma::")) {
      return NotePrecision(i, "uses " + q);
    }
    for (const char* p : {"__float2half", "__float2bfloat16", "__half", "__bfloat16",
                          "__floats2half", "__floats2bfloat16", "__float22half",
                          "__float22bfloat16", "__hadd", "__hsub", "__hmul", "__hdiv", "__hfma",
                          "__hneg", "__habs", "__hmax", "__hmin", "__nv_fp8", "__nv_cvt_float"}) {
      if (StartsWith(last, p)) return NotePrecision(i, "uses " + q);
    }
    // H18, H03, H15, H17, H20.
    for (const char* p : {"accessPolicyWindow", "cudaAccessPropertyPersisting",
                          "cudaLimitPersistingL2CacheSize", "cudaStreamAttributeAccessPolicyWindow",
                          "cudaStreamSetAttribute", "cudaCtxResetPersistingL2Cache"}) {
      if (q == p || last == p) return Flag("H18", i, "uses " + q);
    }
    if ((q == "try" && Is(i + 1, "{")) || (q == "catch" && Is(i + 1, "("))) {
      return Flag("H03", i, "uses " + q);
    }
    if (q == "getenv" || q == "std::getenv" || q == "secure_getenv" || q == "environ") {
      return Flag("H15", i, "reads the environment (" + q + ")");
    }
    static const std::set<std::string> kExit = {
        "exit", "_exit", "abort", "quick_exit", "std::exit", "std::abort", "std::quick_exit"};
    // Not proof: CUDA error checks call abort() or exit() after printing the error. A process
    // that exits during a call ends runtime_error (what runs decides); noted only.
    if (kExit.count(q) && call) {
      ctx_.ReportSubmitted("H17_note", SubmittedLine(i), t_[i].col,
                           "kernel source calls " + q +
                               " (an exit on an error path: a process that exits during a call "
                               "is runtime_error)",
                           RuleHint("H17_note"), Severity::kInfo);
      return;
    }
    static const std::set<std::string> kEscape = {
        "fopen",       "freopen", "std::ifstream", "std::ofstream", "std::fstream", "system",
        "std::system", "popen",   "execv",         "execve",        "execvp",       "execl",
        "execlp",      "socket",  "connect",       "unlink",        "opendir",      "mmap"};
    if ((kEscape.count(q) && (call || StartsWith(q, "std::"))) ||
        StartsWith(q, "std::filesystem")) {
      return Flag("H20", i, "uses " + q);
    }
    // H16: Python run from C++, through pybind11 or the C API: code in a string, a module
    // imported by name, the interpreter's hooks, frames and globals. The Python rules read the
    // candidate's Python only; such code is out of their sight (gc, frames, sys.modules, timer
    // patches alike). Releasing or taking the GIL (gil_scoped_release, PyGILState_*) is not.
    if (IsPythonFromCpp(q, last)) return Flag("H16", i, "runs Python from C++ (" + q + ")");
    // Last, so the more specific rules above name at::cuda::getStreamFromPool and friends.
    if ((StartsWith(q, "at::") || StartsWith(q, "torch::")) && call && !AllowedAten(q)) {
      return Flag("H04", i, "calls " + q + " (PyTorch compute)");
    }
  }

  // `q` a qualified name, `last` its last part.
  static bool IsPythonFromCpp(const std::string& q, const std::string& last) {
    if (StartsWith(q, "py::") || StartsWith(q, "pybind11::")) {
      static const std::set<std::string> kRun = {"exec", "eval", "eval_file", "import",
                                                 "globals", "eval_mode"};
      if (kRun.count(last)) return true;
    }
    for (const char* p : {"PyRun_", "PyImport_", "PyEval_Set", "PyEval_Eval", "PyEval_Get",
                          "PySys_", "PyFrame_", "PyThreadState_GetFrame", "Py_CompileString",
                          "PyGC_", "PyCode_", "PyUnstable_"}) {
      if (StartsWith(last, p)) return true;
    }
    return false;
  }

  // The CUDA type `half` (but not a variable named half): `half*`, `half x`, `<half>`, `(half)`.
  bool HalfWord(int i) const {
    if (t_[i].text != "half") return false;
    if (IdentIs(i + 1) || Is(i - 1, "<") || Is(i + 1, ">")) return true;
    if (Is(i - 1, "(") && Is(i + 1, ")")) return true;
    const bool decl_before = Is(i - 1, "(") || Is(i - 1, ",") || Is(i - 1, "{") || Is(i - 1, ";") ||
                             (IdentIs(i - 1) && t_[i - 1].text == "const");
    return decl_before && (Is(i + 1, "*") || Is(i + 1, "&"));
  }

  void Include(int i) {
    const std::string& p = t_[i].text;
    for (const char* lib :
         {"cublas",     "cudnn",    "cusparse",   "cufft",       "cusolver", "cutlass",
          "cute/",      "thrust/",  "cub/device", "ATen/native", "ATen/ops", "CUDABlas",
          "ATen/cudnn", "torch/nn", "mkl",        "cblas",       "dnnl",     "mkldnn",
          "oneapi",     "Eigen",    "openblas"}) {
      if (Contains(p, lib)) return Flag("H04", i, "includes <" + p + ">");
    }
    // <cuda_fp16.h>, <cuda_bf16.h>, <cuda_fp8.h>, <mma.h>: an include is not proof of a
    // downgrade (H13); what the kernel then uses is checked where it is used.
  }

  // `a + b` on torch::Tensor values inside one function body: PyTorch compute in C++.
  void TensorArithmetic() {
    const int n = static_cast<int>(t_.size());
    int depth = 0, region = 0;
    std::set<std::string> tensors;
    for (int i = 0; i < n; ++i) {
      if (Is(i, "{") && depth++ == 0) {
        // The function's signature starts after the previous top-level ';' or '}'.
        tensors.clear();
        for (int k = i - 1; k >= region && !Is(k, ";") && !Is(k, "}"); --k) Declare(k, &tensors);
      }
      if (Is(i, "}") && depth > 0 && --depth == 0) region = i + 1;
      if (depth == 0) continue;
      Declare(i, &tensors);
      static const std::set<std::string> kOps = {"+", "-", "*", "/", "+=", "-=", "*=", "/="};
      if (t_[i].kind != K::kPunct || !kOps.count(t_[i].text)) continue;
      const bool left =
          IdentIs(i - 1) && tensors.count(t_[i - 1].text) && !Is(i - 2, ".") && !Is(i - 2, "->");
      const bool right = IdentIs(i + 1) && tensors.count(t_[i + 1].text) && !Is(i + 2, ".") &&
                         !Is(i + 2, "->") && !Is(i + 2, "(") && !Is(i + 2, "[");
      if (left || right) {
        Flag("H04", i, "applies " + t_[i].text + " to the tensor " + t_[left ? i - 1 : i + 1].text);
      }
    }
  }
  // `Tensor x`, `Tensor& x`, `const at::Tensor& x`, `auto x = torch::...(`/`x.method(`.
  void Declare(int i, std::set<std::string>* tensors) const {
    if (IdentIs(i) && Last(t_[i].text) == "Tensor") {
      int k = i + 1;
      while (Is(k, "&") || Is(k, "&&") || (IdentIs(k) && t_[k].text == "const")) ++k;
      if (IdentIs(k) && !Is(k + 1, "(")) tensors->insert(t_[k].text);
    }
    if (IdentIs(i) && t_[i].text == "auto" && IdentIs(i + 1) && Is(i + 2, "=") && IdentIs(i + 3)) {
      const std::string& v = t_[i + 3].text;
      if (((StartsWith(v, "torch::") || StartsWith(v, "at::")) && !Contains(v, "cuda::")) ||
          (tensors->count(v) &&
           !(Is(i + 4, ".") && IdentIs(i + 5) && IsMetadataName(t_[i + 5].text)))) {
        tensors->insert(t_[i + 1].text);
      }
    }
  }

  Context& ctx_;
  const extract::InlineCall& call_;
  const extract::SourceText& src_;
  const std::vector<CppToken> t_;
};

}  // namespace

void CheckKernelSources(Context& ctx) {
  for (const extract::InlineCall& call : ctx.candidate().inline_calls) {
    if (!call.resolved) continue;
    for (const auto* list : {&call.cpp_sources, &call.cuda_sources}) {
      for (const extract::SourceText& src : *list) SourceRules(ctx, call, src).Run();
    }
  }
}

}  // namespace kf::legality
