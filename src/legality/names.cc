#include "legality/names.h"

#include <algorithm>
#include <set>
#include <string>

namespace kf::legality {
namespace {

struct Entry {
  const char* path;
  const char* code;
  const char* what;
};

// Whole leading components: "os.environ" matches "os.environ" and "os.environ.get".
constexpr Entry kBannedPaths[] = {
    // H07: work that outlives the timed region on another thread, process or stream.
    {"threading", "H07", "threads"},
    {"_thread", "H07", "threads"},
    {"multiprocessing", "H07", "processes"},
    {"concurrent", "H07", "thread/process pools"},
    {"asyncio", "H07", "asynchronous tasks"},
    {"os.fork", "H07", "forking"},
    {"os.forkpty", "H07", "forking"},
    {"os.register_at_fork", "H07", "forking"},
    {"torch.multiprocessing", "H07", "processes"},
    {"torch.futures", "H07", "asynchronous futures"},
    {"torch.jit.fork", "H07", "asynchronous tasks"},
    {"torch.jit._fork", "H07", "asynchronous tasks"},
    {"torch.cuda.Stream", "H07", "a side CUDA stream"},
    {"torch.cuda.ExternalStream", "H07", "a side CUDA stream"},
    {"torch.cuda.stream", "H07", "switching CUDA streams"},
    {"torch.cuda.set_stream", "H07", "switching CUDA streams"},
    {"torch.cuda.StreamContext", "H07", "switching CUDA streams"},
    {"torch.cuda.streams", "H07", "side CUDA streams"},
    {"torch.Stream", "H07", "a side stream"},
    {"torch.cuda.graph", "H07", "CUDA graphs"},
    {"torch.cuda.graphs", "H07", "CUDA graphs"},
    {"torch.cuda.CUDAGraph", "H07", "CUDA graphs"},
    {"torch.cuda.make_graphed_callables", "H07", "CUDA graphs"},
    // H03: swallowing the failure of a kernel.
    {"contextlib.suppress", "H03", "suppressing exceptions"},
    // H08: the judge's own code and the interpreter's builtins are off limits.
    {"kforge", "H08", "the kforge harness"},
    {"kforge_runner", "H08", "the kforge harness"},
    {"kforge_native", "H08", "the kforge harness"},
    {"builtins", "H08", "Python builtins"},
    {"unittest.mock", "H08", "mock patching"},
    {"mock", "H08", "mock patching"},
    // H13 (fp32 problems only; see BannedPythonPath).
    {"torch.float16", "H13", "float16"},
    {"torch.half", "H13", "float16"},
    {"torch.bfloat16", "H13", "bfloat16"},
    {"torch.float8_e4m3fn", "H13", "float8"},
    {"torch.float8_e4m3fnuz", "H13", "float8"},
    {"torch.float8_e5m2", "H13", "float8"},
    {"torch.float8_e5m2fnuz", "H13", "float8"},
    {"torch.HalfTensor", "H13", "float16"},
    {"torch.BFloat16Tensor", "H13", "bfloat16"},
    {"torch.cuda.HalfTensor", "H13", "float16"},
    {"torch.cuda.BFloat16Tensor", "H13", "bfloat16"},
    {"torch.autocast", "H13", "autocast"},
    {"torch.amp", "H13", "automatic mixed precision"},
    {"torch.cuda.amp", "H13", "automatic mixed precision"},
    {"torch.cpu.amp", "H13", "automatic mixed precision"},
    {"torch.set_autocast_enabled", "H13", "autocast"},
    {"torch.set_float32_matmul_precision", "H13", "reduced fp32 matmul precision"},
    {"torch.backends.cuda.matmul", "H13", "TF32 / reduced-precision matmul settings"},
    {"torch.backends.cudnn.allow_tf32", "H13", "TF32 convolutions"},
    {"torch.backends.fp32_precision", "H13", "reduced fp32 precision"},
    // H15: telling the judge's correctness runs from its timing runs.
    {"os.environ", "H15", "environment variables"},
    {"os.environb", "H15", "environment variables"},
    {"os.getenv", "H15", "environment variables"},
    {"os.getenvb", "H15", "environment variables"},
    {"os.putenv", "H15", "environment variables"},
    {"os.unsetenv", "H15", "environment variables"},
    {"sys.argv", "H15", "the command line"},
    {"sys.orig_argv", "H15", "the command line"},
    {"sys.gettrace", "H15", "the tracer state"},
    {"traceback", "H15", "the call stack"},
    {"torch.profiler", "H15", "the profiler state"},
    {"torch.autograd.profiler", "H15", "the profiler state"},
    {"torch.autograd._profiler_enabled", "H15", "the profiler state"},
    {"torch._C._autograd", "H15", "the profiler state"},
    {"torch.cuda.is_current_stream_capturing", "H15", "the capture state"},
    // H16: reading the process's memory or interpreter state.
    {"gc", "H16", "the garbage collector's object list"},
    {"inspect", "H16", "interpreter introspection"},
    {"ctypes", "H16", "raw memory access"},
    {"_ctypes", "H16", "raw memory access"},
    {"cffi", "H16", "raw memory access"},
    {"importlib", "H16", "dynamic imports"},
    {"pickle", "H16", "object serialisation"},
    {"marshal", "H16", "code serialisation"},
    {"dill", "H16", "object serialisation"},
    {"cloudpickle", "H16", "object serialisation"},
    {"shelve", "H16", "object serialisation"},
    {"copyreg", "H16", "object serialisation"},
    {"dis", "H16", "bytecode introspection"},
    {"code", "H16", "dynamic code"},
    {"codeop", "H16", "dynamic code"},
    {"objgraph", "H16", "object-graph walking"},
    {"sys._getframe", "H16", "stack frames"},
    {"sys._current_frames", "H16", "stack frames"},
    {"sys.modules", "H16", "loaded modules"},
    {"sys.settrace", "H16", "tracing hooks"},
    {"sys.setprofile", "H16", "profiling hooks"},
    {"sys.addaudithook", "H16", "audit hooks"},
    {"sys.getrefcount", "H16", "object reference counts"},
    {"torch.cuda.memory_snapshot", "H16", "the allocator's memory"},
    {"torch.cuda.memory._snapshot", "H16", "the allocator's memory"},
    // H17: ending the process or writing the result channel.
    {"sys.exit", "H17", "exiting the process"},
    {"os._exit", "H17", "exiting the process"},
    {"os.abort", "H17", "exiting the process"},
    {"os.kill", "H17", "signalling processes"},
    {"os.killpg", "H17", "signalling processes"},
    {"atexit", "H17", "exit hooks"},
    {"sys.stdout", "H17", "the process's output streams"},
    {"sys.stderr", "H17", "the process's output streams"},
    {"sys.__stdout__", "H17", "the process's output streams"},
    {"sys.__stderr__", "H17", "the process's output streams"},
    // H20: files, network and processes.
    {"io", "H20", "file I/O"},
    {"pathlib", "H20", "file I/O"},
    {"glob", "H20", "file-system listing"},
    {"shutil", "H20", "file-system changes"},
    {"tempfile", "H20", "temporary files"},
    {"mmap", "H20", "memory-mapped files"},
    {"fcntl", "H20", "file descriptors"},
    {"sqlite3", "H20", "databases"},
    {"zipfile", "H20", "archives"},
    {"tarfile", "H20", "archives"},
    {"socket", "H20", "the network"},
    {"ssl", "H20", "the network"},
    {"select", "H20", "the network"},
    {"selectors", "H20", "the network"},
    {"urllib", "H20", "the network"},
    {"urllib3", "H20", "the network"},
    {"requests", "H20", "the network"},
    {"http", "H20", "the network"},
    {"httpx", "H20", "the network"},
    {"aiohttp", "H20", "the network"},
    {"ftplib", "H20", "the network"},
    {"smtplib", "H20", "the network"},
    {"xmlrpc", "H20", "the network"},
    {"webbrowser", "H20", "the network"},
    {"subprocess", "H20", "child processes"},
    {"pty", "H20", "child processes"},
    {"signal", "H20", "signal handlers"},
    {"resource", "H20", "resource limits"},
    {"os.system", "H20", "running shell commands"},
    {"os.popen", "H20", "running shell commands"},
    {"os.open", "H20", "file I/O"},
    {"os.fdopen", "H20", "file I/O"},
    {"os.read", "H20", "file I/O"},
    {"os.write", "H20", "file I/O"},
    {"os.pipe", "H20", "file I/O"},
    {"os.dup", "H20", "file I/O"},
    {"os.dup2", "H20", "file I/O"},
    {"os.mkfifo", "H20", "file I/O"},
    {"os.remove", "H20", "file-system changes"},
    {"os.unlink", "H20", "file-system changes"},
    {"os.rmdir", "H20", "file-system changes"},
    {"os.removedirs", "H20", "file-system changes"},
    {"os.rename", "H20", "file-system changes"},
    {"os.renames", "H20", "file-system changes"},
    {"os.replace", "H20", "file-system changes"},
    {"os.mkdir", "H20", "file-system changes"},
    {"os.makedirs", "H20", "file-system changes"},
    {"os.chmod", "H20", "file-system changes"},
    {"os.chown", "H20", "file-system changes"},
    {"os.symlink", "H20", "file-system changes"},
    {"os.link", "H20", "file-system changes"},
    {"os.truncate", "H20", "file-system changes"},
    {"os.chdir", "H20", "changing directory"},
    {"os.listdir", "H20", "file-system listing"},
    {"os.scandir", "H20", "file-system listing"},
    {"os.walk", "H20", "file-system listing"},
    {"os.stat", "H20", "file-system probing"},
    {"os.path.exists", "H20", "file-system probing"},
    {"os.path.lexists", "H20", "file-system probing"},
    {"os.path.isfile", "H20", "file-system probing"},
    {"os.path.isdir", "H20", "file-system probing"},
    {"os.path.getsize", "H20", "file-system probing"},
    {"os.path.getmtime", "H20", "file-system probing"},
    {"sys.path", "H20", "the import path"},
    {"torch.load", "H20", "reading files"},
    {"torch.save", "H20", "writing files"},
    {"torch.hub", "H20", "downloads"},
    {"numpy.load", "H20", "reading files"},
    {"numpy.save", "H20", "writing files"},
    {"numpy.fromfile", "H20", "reading files"},
    {"numpy.memmap", "H20", "memory-mapped files"},
};

bool MatchesPrefix(std::string_view path, std::string_view prefix) {
  return path.substr(0, prefix.size()) == prefix &&
         (path.size() == prefix.size() || path[prefix.size()] == '.');
}

}  // namespace

Banned BannedPythonPath(std::string_view path, bool fp32_problem) {
  for (const Entry& e : kBannedPaths) {
    if (!MatchesPrefix(path, e.path)) continue;
    if (std::string_view(e.code) == "H13" && !fp32_problem) continue;
    return Banned{e.code, e.what};
  }
  // os.execv, os.execlp, os.spawnv, os.posix_spawnp, ...: a family too long to list.
  if (MatchesPrefix(path, "os") && path.size() > 3) {
    const std::string_view fn = path.substr(3);
    if (fn.rfind("exec", 0) == 0 || fn.rfind("spawn", 0) == 0 || fn.rfind("posix_spawn", 0) == 0) {
      return Banned{"H20", "running other programs"};
    }
  }
  return {};
}

Banned BannedBuiltin(std::string_view name) {
  static constexpr Entry kBuiltins[] = {
      {"open", "H20", "file I/O"},
      {"input", "H20", "reading stdin"},
      {"breakpoint", "H20", "the debugger"},
      {"exec", "H16", "dynamic code (exec)"},
      {"eval", "H16", "dynamic code (eval)"},
      {"compile", "H16", "dynamic code (compile)"},
      {"__import__", "H16", "dynamic imports (__import__)"},
      {"globals", "H16", "the module's globals()"},
      {"locals", "H16", "locals()"},
      {"exit", "H17", "exiting the process"},
      {"quit", "H17", "exiting the process"},
      {"__builtins__", "H08", "Python builtins"},
  };
  for (const Entry& e : kBuiltins) {
    if (name == e.path) return Banned{e.code, e.what};
  }
  return {};
}

bool AllowedTorchPath(std::string_view path) {
  static const std::set<std::string_view> kAllowedPaths = {
      "torch.Size", "torch.device", "torch.dtype", "torch.finfo", "torch.iinfo",
      "torch.is_tensor", "torch.is_floating_point", "torch.is_complex", "torch.numel",
      "torch.no_grad", "torch.inference_mode", "torch.enable_grad", "torch.set_grad_enabled",
      "torch.is_grad_enabled", "torch.get_default_dtype", "torch.result_type",
      "torch.promote_types", "torch.can_cast", "torch.broadcast_shapes", "torch.manual_seed",
      "torch.typename", "torch.cuda.synchronize", "torch.cuda.current_device",
      "torch.cuda.device_count", "torch.cuda.is_available", "torch.cuda.current_stream",
      "torch.cuda.default_stream", "torch.cuda.get_device_properties",
      "torch.cuda.get_device_capability", "torch.cuda.get_device_name", "torch.cuda.device",
      "torch.cuda.set_device",
      // allocation
      "torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros", "torch.zeros_like",
      "torch.ones", "torch.ones_like", "torch.full", "torch.full_like", "torch.arange",
      "torch.tensor", "torch.as_tensor", "torch.from_numpy",
      // views
      "torch.reshape", "torch.flatten", "torch.squeeze", "torch.unsqueeze", "torch.permute",
      "torch.transpose", "torch.t", "torch.narrow", "torch.select", "torch.split", "torch.chunk",
      "torch.unbind", "torch.movedim", "torch.swapaxes", "torch.swapdims", "torch.as_strided",
      "torch.broadcast_to",
      // building the candidate's own extension lazily
      "torch.utils.cpp_extension.load_inline", "torch.utils.cpp_extension.load"};
  if (kAllowedPaths.count(path)) return true;
  // torch.ops.<namespace>.<fn> are the candidate's own registered ops, except PyTorch's.
  if (MatchesPrefix(path, "torch.ops") && path.size() > 10) {
    const std::string_view ns = path.substr(10, path.find('.', 10) - 10);
    return ns != "aten" && ns != "prims" && ns != "quantized" && ns != "_quantized" &&
           ns != "torchvision" && ns != "mkldnn";
  }
  return false;
}

bool IsComputeName(std::string_view raw) {
  static const std::set<std::string_view> kCompute = {
      "abs", "absolute", "acos", "acosh", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
      "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
      "add", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "all", "amax", "amin",
      "aminmax", "and", "any", "argmax", "argmin", "argsort", "asin", "asinh", "atan", "atan2",
      "atanh", "avg_pool1d", "avg_pool2d", "avg_pool3d", "baddbmm", "batch_norm", "bernoulli",
      "bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits", "bincount",
      "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "bmm", "cat", "cdist", "ceil",
      "celu", "cholesky", "clamp", "clamp_max", "clamp_min", "clip", "concat", "concatenate",
      "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
      "convolution", "copysign", "cos", "cosh", "cosine_embedding_loss", "cosine_similarity",
      "count_nonzero", "cross", "cross_entropy", "cummax", "cummin", "cumprod", "cumsum", "det",
      "diag", "diff", "digamma", "dist", "div", "divide", "dot", "dropout", "einsum", "elu",
      "embedding", "embedding_bag", "eq", "erf", "erfc", "erfinv", "exp", "exp2", "expm1",
      "floor", "floor_divide", "flip", "fliplr", "flipud", "float_power", "fmax", "fmin", "fmod",
      "fold", "frac", "gather", "ge", "gelu", "glu", "grid_sample", "group_norm", "gt",
      "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "heaviside", "histc",
      "huber_loss", "hypot", "index_add", "index_copy", "index_fill", "index_put",
      "index_reduce", "index_select", "inner", "instance_norm", "interpolate", "inverse",
      "isclose", "isfinite", "isinf", "isnan", "kl_div", "kron", "kthvalue", "l1_loss",
      "layer_norm", "ldexp", "le", "leaky_relu", "lerp", "lgamma", "linear", "local_response_norm",
      "log", "log10", "log1p", "log2", "log_softmax", "logaddexp", "logcumsumexp", "logdet",
      "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "logsigmoid",
      "logsumexp", "lp_pool1d", "lp_pool2d", "lt", "margin_ranking_loss", "masked_fill",
      "masked_scatter", "masked_select", "matmul", "matrix_power", "max", "max_pool1d",
      "max_pool2d", "max_pool3d", "maximum", "mean", "median", "min", "minimum", "mish", "mm",
      "mode", "mse_loss", "mul", "multiply", "mv", "nan_to_num", "nanmean", "nansum", "ne", "neg",
      "negative", "nll_loss", "nonzero", "norm", "normalize", "numpy", "or", "outer", "pad",
      "pairwise_distance", "pdist", "pinverse", "pixel_shuffle", "pixel_unshuffle", "pos", "pow",
      "prelu", "prod", "qr", "quantile", "reciprocal", "relu", "relu6", "remainder", "renorm",
      "repeat", "repeat_interleave", "roll", "round", "rrelu", "rsqrt", "rsub", "rtruediv",
      "radd", "rmul", "rmatmul", "rpow", "scaled_dot_product_attention", "scatter",
      "scatter_add", "scatter_reduce", "selu", "sgn", "sigmoid", "sign", "silu", "sin", "sinc",
      "sinh", "slogdet", "smooth_l1_loss", "softmax", "softmin", "softplus", "softshrink",
      "softsign", "solve", "sort", "sqrt", "square", "std", "std_mean", "stft", "sub",
      "subtract", "sum", "svd", "take", "take_along_dim", "tan", "tanh", "tensordot",
      "threshold", "topk", "trace", "tril", "triplet_margin_loss", "triu", "true_divide",
      "truediv", "floordiv", "trunc", "unique", "upsample", "var", "var_mean", "where", "xlogy",
      "xor", "invert", "lshift", "rshift", "mod", "iadd", "isub", "imul", "itruediv", "imatmul"};
  std::string_view name = raw;
  if (name.size() > 4 && name.substr(0, 2) == "__" && name.substr(name.size() - 2) == "__") {
    name = name.substr(2, name.size() - 4);
  }
  if (name.size() > 1 && name.back() == '_') name.remove_suffix(1);
  return kCompute.count(name) > 0;
}

bool IsMetadataName(std::string_view name) {
  static const std::set<std::string_view> kMeta = {
      "size", "shape", "dim", "ndim", "ndimension", "numel", "nelement", "stride",
      "storage_offset", "item", "tolist", "data_ptr", "is_contiguous", "dtype", "device",
      "element_size", "get_device", "is_cuda", "is_cpu", "requires_grad", "is_floating_point",
      "layout", "names", "nbytes", "itemsize"};
  return kMeta.count(name) > 0;
}

bool IsModuleBookkeeping(std::string_view name) {
  static const std::set<std::string_view> kBook = {
      "parameters", "named_parameters", "buffers", "named_buffers", "children",
      "named_children", "modules", "named_modules", "state_dict", "extra_repr", "train", "eval",
      "to", "cuda", "cpu", "float", "double", "requires_grad_", "zero_grad", "register_buffer",
      "register_parameter", "get_parameter", "get_buffer"};
  return kBook.count(name) > 0;
}

}  // namespace kf::legality
