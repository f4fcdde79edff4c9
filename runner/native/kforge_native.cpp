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

// Bytes of the last-level cache on the CPU, from sysfs; 32 MiB when unknown.
size_t HostCacheBytes() {
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
  return best ? best : (32u << 20);
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

// Runs fn(*arg_sets[(first + k) % P]) for k in [0, iters): before(slot, first + k) when given
// (fresh inputs, untimed), flush, time one call, device-wide sync. Returns (device_ms, wall_ms, last_outputs) where last_outputs[j] is the value of the
// last call made with arg_sets[j] (None if none), so the judge can check timed outputs.
py::tuple RunBatch(py::function fn, py::list arg_sets, int64_t first, int64_t iters, bool flush,
                   bool cuda, py::object before) {
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
  py::list device_ms, wall_ms;
#ifdef KFORGE_WITH_CUDA
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cuda) {
    Check(cudaEventCreate(&start), "cudaEventCreate");
    Check(cudaEventCreate(&stop), "cudaEventCreate");
  }
#endif
  for (int64_t k = 0; k < iters; ++k) {
    const size_t slot = static_cast<size_t>(first + k) % pool;
    if (!before.is_none()) before(slot, first + k);
    if (flush) flusher->Flush(static_cast<int>(first + k));
    DeviceSync(cuda);
    auto w0 = Clock::now();
#ifdef KFORGE_WITH_CUDA
    if (cuda) Check(cudaEventRecord(start, c10::cuda::getCurrentCUDAStream().stream()), "record");
#endif
    py::object out = fn(*args[slot]);
#ifdef KFORGE_WITH_CUDA
    if (cuda) Check(cudaEventRecord(stop, c10::cuda::getCurrentCUDAStream().stream()), "record");
#endif
    DeviceSync(cuda);
    auto w1 = Clock::now();
    double wall = MsSince(w0, w1);
    double dev = wall;
#ifdef KFORGE_WITH_CUDA
    if (cuda) {
      float ms = 0;
      Check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      dev = ms;
    }
#endif
    device_ms.append(dev);
    wall_ms.append(wall);
    last[slot] = out;
  }
#ifdef KFORGE_WITH_CUDA
  if (cuda) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
#endif
  py::list outs;
  for (auto& o : last) outs.append(o);
  return py::make_tuple(device_ms, wall_ms, outs);
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
        py::arg("before") = py::none());
  m.def("device_sync", &DeviceSync, "device-wide synchronize");
  m.def("has_cuda", &HasCuda, "whether this build can time CUDA work");
#ifdef KFORGE_WITH_CUDA
  m.def("shared_alloc", &SharedAlloc, "device memory to share with candidates: (bytes, handle)");
  m.def("shared_open", &SharedOpen, "a shared buffer of the judge's, mapped here");
#endif
}
