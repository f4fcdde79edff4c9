// The device backends (cpu, cuda) as data, and what the machine says about its devices.
#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "backend/backend.h"

namespace kf::backend {
namespace fs = std::filesystem;
namespace {

const std::vector<Device>& Devices() {
  static const std::vector<Device> kDevices = {
      {"cuda", "cuda", true, "cuda",
       R"(cublas|cutlass|cudnn|xmma|nvjet|magma|gemv2T_kernel|gemvNSP|splitKreduce_kernel|(^|[^a-z])(ampere|hopper|volta|turing|sm\d\d)_[a-z0-9]*gemm)"},
      // The CPU profiler records no device kernels: MKL and oneDNN run inside ATen ops, which
      // the ATen allowlist judges.
      {"cpu", "cpu", false, "cpu", "", /*kernels_on_host_cpus=*/true},
  };
  return kDevices;
}

// The first line of `path` that starts with `key`, after its colon; "" when there is none.
std::string FieldOf(const fs::path& path, const std::string& key) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto first = line.find_first_not_of(" \t", colon + 1);
    return first == std::string::npos ? "" : line.substr(first);
  }
  return "";
}

}  // namespace

std::string Device::TorchDevice(int index) const {
  return indexed ? torch_type + ":" + std::to_string(index) : torch_type;
}

const Device* FindDevice(std::string_view name) {
  for (const Device& d : Devices()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::vector<std::string> DeviceNames() {
  std::vector<std::string> names;
  for (const Device& d : Devices()) names.push_back(d.name);
  return names;
}

int GpuNodes(const fs::path& dev) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dev, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() > 6 && name.compare(0, 6, "nvidia") == 0 &&
        name.find_first_not_of("0123456789", 6) == std::string::npos)
      ++n;
  }
  return n;
}

std::string DefaultBackend() { return GpuNodes() > 0 ? "cuda" : "cpu"; }

std::vector<int> VisibleDevices(const Device& d) {
  int n = 1;
  if (d.indexed) {
    const char* vis = std::getenv("CUDA_VISIBLE_DEVICES");
    if (vis && *vis) {
      n = 1;
      for (const char* c = vis; *c; ++c) n += *c == ',' ? 1 : 0;
    } else {
      n = std::max(GpuNodes(), 1);
    }
  }
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(i);
  return out;
}

std::string DeviceModel(const Device& d, const fs::path& proc) {
  if (d.indexed) {
    // The driver's own description of each GPU; no CUDA call, so no context in this process.
    std::vector<std::string> models;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(proc / "driver/nvidia/gpus", ec)) {
      std::string m = FieldOf(e.path() / "information", "Model");
      if (!m.empty()) models.push_back(m);
    }
    std::sort(models.begin(), models.end());
    models.erase(std::unique(models.begin(), models.end()), models.end());
    std::string out;
    for (const auto& m : models) out += (out.empty() ? "" : ", ") + m;
    return out.empty() ? kUnknownGpu : out;
  }
  std::string cpu = FieldOf(proc / "cpuinfo", "model name");
  return cpu.empty() ? "unknown CPU" : cpu;
}

}  // namespace kf::backend
