// The banned-name tables of H03 H07 H08 H13 H15 H16 H17 H20 (see names.h for the mapping).
#include <string>

#include "legality/names.h"

namespace kf::legality {
namespace {

struct Entry {
  const char* path;
  const char* code;
  const char* what;
  bool graph = false;  // a CUDA graph API (Banned::graph)
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
    // What torch.cuda.Stream and torch.Stream are made from, and what switches streams
    // underneath torch.cuda.set_stream: the same side streams under private names (seen on
    // an H100, 2026-12-05: a CUDA graph replayed on torch._C._CudaStreamBase's stream, its work
    // hidden inside the timing's GPU delay).
    {"torch._C._CudaStreamBase", "H07", "a side CUDA stream"},
    {"torch._C.Stream", "H07", "a side stream"},
    {"torch._C._cuda_setStream", "H07", "switching CUDA streams"},
    {"torch.cuda._set_stream_by_id", "H07", "switching CUDA streams"},
    {"torch.cuda.get_stream_from_external", "H07", "a side CUDA stream"},
    {"torch._streambase", "H07", "side streams"},
    // The device-generic spellings of the same: torch.accelerator's current stream, and the
    // device modules looked up at run time (torch.get_device_module("cuda").Stream is
    // torch.cuda.Stream, dynamo's device interfaces wrap the same calls).
    {"torch.accelerator.set_stream", "H07", "switching streams"},
    {"torch._C._accelerator_setStream", "H07", "switching streams"},
    {"torch.get_device_module", "H07", "a device module looked up at run time, streams and all"},
    {"torch._dynamo.device_interface", "H07", "device interfaces, streams and all"},
    // CUDA graphs from Python: H07 under every policy (docs/RULES.md, "CUDA graphs under the
    // two policies").
    {"torch.cuda.graph", "H07", "CUDA graphs", true},
    {"torch.cuda.graphs", "H07", "CUDA graphs", true},
    {"torch.cuda.CUDAGraph", "H07", "CUDA graphs", true},
    {"torch.cuda.make_graphed_callables", "H07", "CUDA graphs", true},
    {"torch.cuda.graph_pool_handle", "H07", "CUDA graphs", true},
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

}  // namespace

Banned BannedPythonPath(std::string_view path, bool fp32_problem) {
  for (const Entry& e : kBannedPaths) {
    if (!MatchesPrefix(path, e.path)) continue;
    if (std::string_view(e.code) == "H13" && !fp32_problem) continue;
    return Banned{e.code, e.what, e.graph};
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

}  // namespace kf::legality
