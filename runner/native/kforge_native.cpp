// The compiled timing helper, loaded by the judge and by every candidate process.
//
// Timing lives here, not in Python, so a candidate cannot patch a timer or the statistics: the
// clock reads, CUDA events, the cache flush and the device-wide synchronisation are all in this
// file. The supervisor drives the loop in batches and applies its own wall-clock bound.
#include <torch/extension.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#ifdef KFORGE_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#endif

namespace py = pybind11;

namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

#ifdef KFORGE_WITH_CUDA
void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
  }
}
#endif

// Bytes of the last-level cache on the CPU, from sysfs; 32 MiB when unknown, and never more than
// 32 MiB: a virtual machine may be shown its host's whole cache (the 2-core development machine
// and CI report a 480 MiB L3), and writing twice that before every timed call cost 100 ms a call
// there, most of every CPU verdict's timing stage (15 s of a 300 ms budget). The CPU backend
// checks the pipeline and compares with eager under the same flush; its caches beyond 64 MiB
// written are left warm.
size_t HostCacheBytes() {
  constexpr size_t kMaxBytes = 32u << 20;
  size_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string s;
    if (!(f >> s)) continue;
    size_t v = std::strtoull(s.c_str(), nullptr, 10);
    if (!s.empty() && (s.back() == 'K' || s.back() == 'k')) v <<= 10;
    if (!s.empty() && (s.back() == 'M' || s.back() == 'm')) v <<= 20;
    best = std::max(best, v);
  }
  return best ? std::min(best, kMaxBytes) : kMaxBytes;
}

// Evicts the caches between samples by writing at least twice their size.
class Flusher {
 public:
  explicit Flusher(bool cuda) : cuda_(cuda) {
#ifdef KFORGE_WITH_CUDA
    if (cuda_) {
      int dev = 0, l2 = 0;
      Check(cudaGetDevice(&dev), "cudaGetDevice");
      Check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "L2 size");
      bytes_ = std::max<size_t>(2 * static_cast<size_t>(l2), 8u << 20);
      Check(cudaMalloc(&dev_buf_, bytes_), "cudaMalloc(flush)");
      return;
    }
#endif
    bytes_ = 2 * HostCacheBytes();
    host_.assign(bytes_, 0);
  }
  ~Flusher() {
#ifdef KFORGE_WITH_CUDA
    if (dev_buf_) cudaFree(dev_buf_);
#endif
  }
  Flusher(const Flusher&) = delete;
  Flusher& operator=(const Flusher&) = delete;

  void Flush(int round) {
#ifdef KFORGE_WITH_CUDA
    if (cuda_) {
      // A persisting-L2 window set by the candidate would survive a plain flush.
      cudaCtxResetPersistingL2Cache();
      Check(cudaMemset(dev_buf_, round & 0xff, bytes_), "flush");
      return;
    }
#endif
    std::memset(host_.data(), round & 0xff, host_.size());
    volatile char sink = host_[static_cast<size_t>(round) % host_.size()];
    (void)sink;
  }
  size_t bytes() const { return bytes_; }
  void* device_buffer() const { return dev_buf_; }

 private:
  bool cuda_;
  size_t bytes_ = 0;
  std::vector<char> host_;
  void* dev_buf_ = nullptr;
};

void DeviceSync(bool cuda) {
#ifdef KFORGE_WITH_CUDA
  if (cuda) Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
#endif
}

#ifdef KFORGE_WITH_CUDA
// The hold: one kernel that flushes the L2 cache and then keeps every SM of the GPU busy until
// `delay_us` have passed since it began, queued on the timed stream before the start event.
// While it runs the host makes the call, so the call's kernels are queued before the start
// event is reached; and because its blocks fill every SM's thread slots, no kernel of any
// other stream can run beside it: work the call sends to another stream cannot hide before the
// start event (it starts after the hold, where the wall-clock bound sees it). A 1-thread sleep
// would leave that window open. Written in PTX and loaded through the driver (libcuda, opened
// at run time): the helper is compiled without nvcc.
const char* kHoldPtx = R"ptx(
.version 7.0
.target sm_70
.address_size 64
.visible .entry kf_hold(.param .u64 buf, .param .u64 words, .param .u64 ns)
{
  .reg .pred %p<3>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<12>;
  mov.u64 %rd1, %globaltimer;
  ld.param.u64 %rd2, [buf];
  ld.param.u64 %rd3, [words];
  ld.param.u64 %rd4, [ns];
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd5, %r1, %r2;
  cvt.u64.u32 %rd6, %r3;
  add.u64 %rd5, %rd5, %rd6;
  mul.wide.u32 %rd7, %r4, %r2;
FLUSH:
  setp.ge.u64 %p1, %rd5, %rd3;
  @%p1 bra SPIN;
  shl.b64 %rd8, %rd5, 2;
  add.u64 %rd9, %rd2, %rd8;
  st.global.u32 [%rd9], %r3;
  add.u64 %rd5, %rd5, %rd7;
  bra FLUSH;
SPIN:
  mov.u64 %rd10, %globaltimer;
  sub.u64 %rd11, %rd10, %rd1;
  setp.lt.u64 %p2, %rd11, %rd4;
  @%p2 bra SPIN;
  ret;
}
)ptx";

class Hold {
 public:
  // Loads the kernel into the current context; ok() is false (and why() says why) where the
  // driver or the PTX JIT is missing: the caller then times the safe way, without a hold.
  Hold() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      why_ = "libcuda.so.1 not found";
      return;
    }
    using LoadData = int (*)(void**, const void*);
    using GetFunction = int (*)(void**, void*, const char*);
    auto load = reinterpret_cast<LoadData>(dlsym(lib, "cuModuleLoadData"));
    auto get = reinterpret_cast<GetFunction>(dlsym(lib, "cuModuleGetFunction"));
    launch_ = reinterpret_cast<Launch>(dlsym(lib, "cuLaunchKernel"));
    if (!load || !get || !launch_) {
      why_ = "the CUDA driver lacks cuModuleLoadData/cuLaunchKernel";
      return;
    }
    void* module = nullptr;
    if (int e = load(&module, kHoldPtx); e != 0) {
      why_ = "the hold kernel's PTX did not load (CUresult " + std::to_string(e) + ")";
      return;
    }
    if (int e = get(&function_, module, "kf_hold"); e != 0) {
      why_ = "no kf_hold in the module (CUresult " + std::to_string(e) + ")";
      return;
    }
    int dev = 0, sms = 0, threads = 0;
    Check(cudaGetDevice(&dev), "cudaGetDevice");
    Check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
    Check(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev),
          "threads per SM");
    // Blocks of at most 1024 threads that fill each SM's thread slots exactly.
    const int per_sm = (threads + 1023) / 1024;
    block_ = threads / per_sm;
    grid_ = sms * per_sm;
    ok_ = block_ > 0 && grid_ > 0 && threads % per_sm == 0;
    if (!ok_) why_ = "cannot fill an SM of " + std::to_string(threads) + " threads";
  }
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  // Queues the hold on `stream`: flush `bytes` at `buf`, then wait until `delay_us` have passed.
  void Queue(void* buf, size_t bytes, double delay_us, cudaStream_t stream) {
    unsigned long long b = reinterpret_cast<unsigned long long>(buf), words = bytes / 4,
                       ns = static_cast<unsigned long long>(std::max(0.0, delay_us) * 1000.0);
    void* params[] = {&b, &words, &ns};
    int e = launch_(function_, grid_, 1, 1, block_, 1, 1, 0, stream, params, nullptr);
    if (e != 0) throw std::runtime_error("CUDA error in the timing hold: CUresult " + std::to_string(e));
  }

 private:
  using Launch = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, cudaStream_t, void**, void**);
  bool ok_ = false;
  std::string why_;
  void* function_ = nullptr;
  Launch launch_ = nullptr;
  int grid_ = 0, block_ = 0;
};

Hold& TheHold() {
  static Hold* hold = new Hold();  // one per process, loaded on first use
  return *hold;
}
#endif

// Runs fn(*arg_sets[(first + k) % P]) for k in [0, iters) and times each call.
//
// Per call: before(slot, first + k) when given (fresh inputs, untimed), a device-wide sync,
// then on the timed stream the hold (the cache flush, then every SM kept busy until delay_us
// have passed: see Hold), the start event, the call, the stop event, a device-wide sync. The
// hold keeps the GPU busy while the host makes the call, so the call's kernels are queued
// before the start event is reached: the interval is what the GPU spent on the call, not the
// Python and launch latency of getting there (that is host_ms). nvbench's blocking kernel and
// KernelBench's own timing (a 256 MiB fill before the start event) hide it the same way;
// syncing between the flush and the start event counted the host's latency too: 2-3x the time
// of a launch-bound kernel, and as noisy as the host.
//
// Returns (device_ms, wall_ms, last_outputs, host_ms, hidden):
//   device_ms[k]  start to stop event (the host clock on the CPU backend);
//   wall_ms[k]    the host clock from before the hold to after the closing sync, less the
//                 GPU's own time from before the hold to the start event; informative only
//                 (the supervisor measures its own wall clock);
//   last_outputs[j] the value of the last call made with arg_sets[j] (None if none; each
//                 earlier one is released before the next call with that set);
//   host_ms[k]    the host time of the call itself (the forward's Python and launches);
//   hidden        how many calls returned before the GPU reached their start event (their
//                 host time entirely outside the interval).
py::tuple RunBatch(py::function fn, py::list arg_sets, int64_t first, int64_t iters, bool flush,
                   bool cuda, py::object before, double delay_us) {
  const size_t pool = py::len(arg_sets);
  if (pool == 0) throw std::invalid_argument("run_batch needs at least one argument set");
#ifndef KFORGE_WITH_CUDA
  if (cuda) throw std::runtime_error("this kforge_native was built without CUDA");
#endif
  static Flusher* flusher = nullptr;  // one per process; the buffer is reused across batches
  if (flush && flusher == nullptr) flusher = new Flusher(cuda);
  std::vector<py::tuple> args;
  for (size_t j = 0; j < pool; ++j) args.push_back(py::tuple(arg_sets[j]));
  std::vector<py::object> last(pool, py::none());
  py::list device_ms, wall_ms, host_ms;
  int64_t hidden = 0;
#ifdef KFORGE_WITH_CUDA
  cudaEvent_t pre = nullptr, start = nullptr, stop = nullptr;
  cudaStream_t stream = nullptr;
  // Without the hold (no driver entry points) the GPU is synchronised after the flush and
  // before the start event, as before: the host's latency is then inside the interval.
  bool hold = false;
  if (cuda) {
    Check(cudaEventCreate(&pre), "cudaEventCreate");
    Check(cudaEventCreate(&start), "cudaEventCreate");
    Check(cudaEventCreate(&stop), "cudaEventCreate");
    stream = c10::cuda::getCurrentCUDAStream().stream();
    hold = flush && TheHold().ok();
  }
#endif
  for (int64_t k = 0; k < iters; ++k) {
    const size_t slot = static_cast<size_t>(first + k) % pool;
    // The set's previous output goes before the call that replaces it, outside the timed
    // interval and the call's wall time as before: an output may be GiBs, and holding it while
    // the next one is made would take twice its memory.
    last[slot] = py::none();
    if (!before.is_none()) before(slot, first + k);
    DeviceSync(cuda);
    auto w0 = Clock::now();
#ifdef KFORGE_WITH_CUDA
    if (cuda) {
      Check(cudaEventRecord(pre, stream), "record");
      if (hold) {
        cudaCtxResetPersistingL2Cache();  // a persisting window would survive the flush
        TheHold().Queue(flusher->device_buffer(), flusher->bytes(), delay_us, stream);
      } else {
        if (flush) flusher->Flush(static_cast<int>(first + k));
        DeviceSync(cuda);
      }
      Check(cudaEventRecord(start, stream), "record");
    } else
#endif
    if (flush) {
      flusher->Flush(static_cast<int>(first + k));
      w0 = Clock::now();
    }
    auto h0 = Clock::now();
    py::object out = fn(*args[slot]);
    auto h1 = Clock::now();
    bool early = false;
#ifdef KFORGE_WITH_CUDA
    if (cuda) {
      Check(cudaEventRecord(stop, stream), "record");
      // Not ready: the GPU had not reached the start event when the call returned.
      early = cudaEventQuery(start) == cudaErrorNotReady;
    }
#endif
    DeviceSync(cuda);
    auto w1 = Clock::now();
    double wall = MsSince(w0, w1);
    double dev = MsSince(h0, w1);
#ifdef KFORGE_WITH_CUDA
    if (cuda) {
      float ms = 0, before_ms = 0;
      Check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      Check(cudaEventElapsedTime(&before_ms, pre, start), "cudaEventElapsedTime");
      dev = ms;
      wall = std::max(0.0, wall - before_ms);
    }
#endif
    if (early) ++hidden;
    device_ms.append(dev);
    wall_ms.append(wall);
    host_ms.append(MsSince(h0, h1));
    last[slot] = out;
  }
#ifdef KFORGE_WITH_CUDA
  if (cuda) {
    cudaEventDestroy(pre);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
#endif
  py::list outs;
  for (auto& o : last) outs.append(o);
  return py::make_tuple(device_ms, wall_ms, outs, host_ms, hidden);
}

#ifdef KFORGE_WITH_CUDA
// Device memory the judge shares with candidate processes (CUDA IPC), allocated outside
// PyTorch's caching allocator. Memory PyTorch shares stays allocated until every process it was
// sent to has released it, and a candidate process is killed, never releasing anything: on the
// H200 the judge held 130 GiB after 18 KernelBench problems. cudaFree here returns the memory
// as soon as the judge drops the buffer; the driver keeps it mapped in a live candidate until
// that process exits.
torch::TensorOptions BytesOn(int device) {
  return torch::TensorOptions().dtype(torch::kUInt8).device(torch::kCUDA, device);
}

// A tensor of `nbytes` bytes of fresh device memory and its IPC handle.
py::tuple SharedAlloc(int64_t nbytes, int device) {
  c10::cuda::CUDAGuard guard(device);
  void* p = nullptr;
  Check(cudaMalloc(&p, static_cast<size_t>(std::max<int64_t>(nbytes, 1))), "cudaMalloc");
  cudaIpcMemHandle_t handle;
  if (cudaError_t e = cudaIpcGetMemHandle(&handle, p); e != cudaSuccess) {
    cudaFree(p);
    Check(e, "cudaIpcGetMemHandle");
  }
  auto t = torch::from_blob(p, {nbytes}, [](void* q) { cudaFree(q); }, BytesOn(device));
  return py::make_tuple(t, py::bytes(reinterpret_cast<const char*>(&handle), sizeof(handle)));
}

// The judge's buffer, mapped into this process; unmapped when the tensor is freed.
torch::Tensor SharedOpen(const py::bytes& handle_bytes, int64_t nbytes, int device) {
  std::string s = handle_bytes;
  cudaIpcMemHandle_t handle;
  if (s.size() != sizeof(handle)) throw std::invalid_argument("not a CUDA IPC handle");
  std::memcpy(&handle, s.data(), sizeof(handle));
  c10::cuda::CUDAGuard guard(device);
  void* p = nullptr;
  Check(cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
  return torch::from_blob(p, {nbytes}, [](void* q) { cudaIpcCloseMemHandle(q); }, BytesOn(device));
}
#endif

#ifdef KFORGE_WITH_CUDA
// The GPU's clocks, temperature, power and throttle reasons, from NVML (libnvidia-ml.so.1,
// part of the driver, opened at run time: nothing to link). nvbench records the same so a
// measurement taken on a throttled or down-clocked GPU is visible. Empty where NVML is absent.
py::dict GpuState(int device) {
  static void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  py::dict out;
  if (lib == nullptr) {
    out["error"] = "libnvidia-ml.so.1 not found";
    return out;
  }
  // NVML's C functions, each by its exact type (nvmlDevice_t is an opaque pointer).
  auto sym = [](const char* name, auto type) {
    return reinterpret_cast<decltype(type)>(dlsym(lib, name));
  };
  using Clock3 = int (*)(void*, int, unsigned int*);
  static bool inited = false;
  if (!inited) {
    auto init = sym("nvmlInit_v2", static_cast<int (*)()>(nullptr));
    if (init == nullptr || init() != 0) {
      out["error"] = "nvmlInit failed";
      return out;
    }
    inited = true;
  }
  char bus[64] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), device) != cudaSuccess) {
    out["error"] = "no PCI bus id for the device";
    return out;
  }
  void* handle = nullptr;
  auto by_bus = sym("nvmlDeviceGetHandleByPciBusId_v2", static_cast<int (*)(const char*, void**)>(nullptr));
  if (by_bus == nullptr || by_bus(bus, &handle) != 0) {
    out["error"] = "NVML does not know the device";
    return out;
  }
  unsigned int v = 0;
  if (auto f = sym("nvmlDeviceGetClockInfo", Clock3())) {
    if (f(handle, 1 /* SM */, &v) == 0) out["sm_mhz"] = v;
    if (f(handle, 2 /* MEM */, &v) == 0) out["mem_mhz"] = v;
  }
  if (auto f = sym("nvmlDeviceGetMaxClockInfo", Clock3())) {
    if (f(handle, 1, &v) == 0) out["sm_max_mhz"] = v;
  }
  if (auto f = sym("nvmlDeviceGetTemperature", Clock3()); f && f(handle, 0 /* GPU */, &v) == 0)
    out["temp_c"] = v;
  using Get = int (*)(void*, unsigned int*);
  if (auto f = sym("nvmlDeviceGetPowerUsage", Get()); f && f(handle, &v) == 0)
    out["power_w"] = v / 1000.0;
  unsigned long long reasons = 0;
  using Reasons = int (*)(void*, unsigned long long*);
  auto r = sym("nvmlDeviceGetCurrentClocksEventReasons", Reasons());
  if (r == nullptr) r = sym("nvmlDeviceGetCurrentClocksThrottleReasons", Reasons());
  if (r != nullptr && r(handle, &reasons) == 0) {
    static const std::pair<unsigned long long, const char*> kNames[] = {
        {0x1, "gpu_idle"},          {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
        {0x8, "hw_slowdown"},       {0x10, "sync_boost"},         {0x20, "sw_thermal"},
        {0x40, "hw_thermal"},       {0x80, "hw_power_brake"},     {0x100, "display_clocks"}};
    py::list names;
    for (const auto& [bit, name] : kNames)
      if (reasons & bit) names.append(name);
    out["throttle"] = names;
  }
  return out;
}
#endif

#ifdef KFORGE_WITH_CUDA
// "" when the hold is loaded in this process, else why not (the verdict records it).
std::string HoldProblem() { return TheHold().ok() ? std::string() : TheHold().why(); }
#endif

bool HasCuda() {
#ifdef KFORGE_WITH_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("run_batch", &RunBatch, "time a batch of calls (see kforge_native.cpp)", py::arg("fn"),
        py::arg("arg_sets"), py::arg("first"), py::arg("iters"), py::arg("flush"), py::arg("cuda"),
        py::arg("before") = py::none(), py::arg("delay_us") = 0.0);
  m.def("device_sync", &DeviceSync, "device-wide synchronize");
  m.def("has_cuda", &HasCuda, "whether this build can time CUDA work");
#ifdef KFORGE_WITH_CUDA
  m.def("shared_alloc", &SharedAlloc, "device memory to share with candidates: (bytes, handle)");
  m.def("shared_open", &SharedOpen, "a shared buffer of the judge's, mapped here");
  m.def("gpu_state", &GpuState, "clocks, temperature, power and throttle reasons (NVML)");
  m.def("hold_problem", &HoldProblem, "why the timing hold is unavailable here, or \"\"");
#endif
}
