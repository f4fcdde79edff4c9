#include "build/environment.h"

#include <regex>
#include <sstream>

namespace kf::build {
namespace {

// Debian's package is in non-free (not every machine has that section enabled); NVIDIA's
// own toolkit works as well, found through CUDA_HOME or nvcc on PATH like torch finds it.
constexpr const char* kCudaFix =
    "apt-get install nvidia-cuda-toolkit (Debian non-free), or install NVIDIA's CUDA toolkit "
    "and put its bin/ on PATH (or set CUDA_HOME)";

bool IsMember(const ToolchainPart& p, const std::string& file) {
  for (const auto& m : p.members) {
    if ((!m.empty() && m.back() == '/') ? file.rfind(m, 0) == 0 : file == m) return true;
  }
  return false;
}

// The part a missing file ("torch/extension.h" or "-ltorch") belongs to; null for none.
const ToolchainPart* PartOf(const std::string& file) {
  bool library = file.rfind("-l", 0) == 0;
  std::string name = library ? file.substr(2) : file;
  for (const auto& p : ToolchainParts()) {
    if ((p.kind == PartKind::kLibraries) == library && p.kind != PartKind::kTool &&
        IsMember(p, name)) {
      return &p;
    }
  }
  return nullptr;
}

// Whether the worker looked for the part's sentinel and did not find it. Not looked for
// (absent) is unknown, which blames nothing.
bool SentinelMissing(const nlohmann::json& toolchain, const ToolchainPart& p) {
  const char* group = p.kind == PartKind::kHeaders ? "headers" : "libraries";
  if (!toolchain.is_object() || !toolchain.contains(group)) return false;
  const auto& found = toolchain[group];
  if (!found.is_object() || !found.contains(p.sentinel)) return false;
  const auto& path = found[p.sentinel];
  return path.is_null() || (path.is_string() && path.get<std::string>().empty());
}

// A tool's fact is "missing" only when reported as null.
bool ReportedNull(const nlohmann::json& toolchain, const char* key) {
  return toolchain.is_object() && toolchain.contains(key) && toolchain[key].is_null();
}

EnvironmentFault Fault(const ToolchainPart& p, const std::string& missing,
                       const std::string& detail) {
  return {p.id, missing, detail, p.fix};
}

EnvironmentFault FileFault(const ToolchainPart& p, const std::string& file) {
  return Fault(p, file, file + " is missing (" + p.what + ")");
}

std::optional<EnvironmentFault> ToolFault(const nlohmann::json& tc, bool uses_cuda) {
  const ToolchainPart& cxx = *FindPart("compiler");
  std::string name = tc.is_object() ? tc.value("cxx", "c++") : "c++";
  if (ReportedNull(tc, "cxx_path")) {
    return Fault(cxx, name, name + " is not on PATH (" + cxx.what + ")");
  }
  if (tc.is_object() && tc.contains("cxx_works") && tc["cxx_works"].is_boolean() &&
      !tc["cxx_works"].get<bool>()) {
    return Fault(cxx, name, name + " does not compile an empty program (" + cxx.what + ")");
  }
  if (ReportedNull(tc, "ninja")) {
    const ToolchainPart& p = *FindPart("ninja");
    return Fault(p, "ninja", "ninja is not on PATH (" + p.what + ")");
  }
  if (uses_cuda && ReportedNull(tc, "nvcc")) {
    const ToolchainPart& p = *FindPart("nvcc");
    return Fault(p, "nvcc", "nvcc is not found (" + p.what + ")");
  }
  return std::nullopt;
}

}  // namespace

const std::vector<ToolchainPart>& ToolchainParts() {
  static const std::vector<ToolchainPart> kParts = {
      {"torch_headers", PartKind::kHeaders, "PyTorch's C++ headers", "torch/extension.h",
       {"torch/", "ATen/", "c10/", "caffe2/", "TH/", "THC/"}, false,
       "apt-get install libtorch-dev"},
      {"pybind11", PartKind::kHeaders, "pybind11's headers", "pybind11/pybind11.h",
       {"pybind11/"}, false, "apt-get install pybind11-dev"},
      {"python_headers", PartKind::kHeaders, "Python's C headers", "Python.h",
       {"Python.h", "pyconfig.h"}, false, "apt-get install python3-dev"},
      {"torch_libraries", PartKind::kLibraries, "PyTorch's libraries", "torch",
       {"torch", "torch_cpu", "torch_python", "c10", "torch_cuda", "c10_cuda", "shm"}, false,
       "apt-get install python3-torch libtorch-dev"},
      {"compiler", PartKind::kTool, "the C++ compiler torch's builder runs: $CXX, else c++", "",
       {}, false, "apt-get install g++"},
      {"ninja", PartKind::kTool, "torch's builder runs ninja", "", {}, false,
       "apt-get install ninja-build"},
      {"nvcc", PartKind::kTool, "the CUDA compiler", "", {}, true, kCudaFix},
      {"cuda_headers", PartKind::kHeaders, "the CUDA toolkit's headers", "cuda_runtime.h",
       {"cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "cuda_fp16.h", "cuda_fp16.hpp",
        "cuda_bf16.h", "cuda_bf16.hpp", "cuda_fp8.h", "mma.h", "cub/", "thrust/", "cuda/",
        "cooperative_groups.h", "cooperative_groups/", "crt/", "cuda_pipeline.h",
        "cuda_awbarrier.h", "device_launch_parameters.h", "vector_types.h", "cublas_v2.h",
        "cublas.h", "cublasLt.h", "curand.h", "curand_kernel.h", "cufft.h", "cusparse.h",
        "cusolverDn.h", "nvrtc.h", "nvtx3/", "nvToolsExt.h"},
       true, kCudaFix},
      {"cuda_libraries", PartKind::kLibraries, "the CUDA toolkit's libraries", "cudart",
       {"cudart", "cuda", "cublas", "cublasLt", "curand", "cufft", "cusparse", "cusolver",
        "nvrtc", "nvToolsExt", "nvJitLink"},
       true, kCudaFix},
  };
  return kParts;
}

const ToolchainPart* FindPart(const std::string& id) {
  for (const auto& p : ToolchainParts()) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

nlohmann::json ToolchainProbe(const std::string& backend) {
  nlohmann::json probe = {{"headers", nlohmann::json::array()},
                          {"libraries", nlohmann::json::array()}};
  for (const auto& p : ToolchainParts()) {
    if (p.kind == PartKind::kTool || (p.cuda_only && backend != "cuda")) continue;
    probe[p.kind == PartKind::kHeaders ? "headers" : "libraries"].push_back(p.sentinel);
  }
  return probe;
}

std::string EnvironmentFault::Message() const {
  return "environment: " + detail + "; fix: " + fix;
}

std::vector<std::string> MissingFiles(const std::string& output) {
  // gcc:   main.cpp:1:10: fatal error: torch/extension.h: No such file or directory
  static const std::regex kGcc(R"(:\d+:\d+: fatal error: (.+): No such file or directory)");
  // clang: main.cpp:1:10: fatal error: 'torch/extension.h' file not found
  static const std::regex kClang(R"(fatal error: '(.+)' file not found)");
  // nvcc's front end: catastrophic error: cannot open source file "cuda_fp16.h"
  static const std::regex kEdg(R"(catastrophic error: cannot open source file \"(.+)\")");
  // ld:    /usr/bin/ld: cannot find -ltorch: No such file or directory
  static const std::regex kLd(R"(ld(?:\.\w+)?: cannot find -l([^\s:]+))");
  std::vector<std::string> out;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kGcc) || std::regex_search(line, m, kClang) ||
        std::regex_search(line, m, kEdg)) {
      out.push_back(m[1]);
    } else if (std::regex_search(line, m, kLd)) {
      out.push_back("-l" + std::string(m[1]));
    }
  }
  return out;
}

std::optional<EnvironmentFault> ClassifyBuildFailure(const std::string& output,
                                                     const nlohmann::json& toolchain,
                                                     bool uses_cuda) {
  if (auto tool = ToolFault(toolchain, uses_cuda)) return tool;
  auto needed = [&](const ToolchainPart& p) { return !p.cuda_only || uses_cuda; };
  // A file the compiler could not find whose part is missing too: name that file.
  for (const auto& file : MissingFiles(output)) {
    const ToolchainPart* p = PartOf(file);
    if (p && needed(*p) && SentinelMissing(toolchain, *p)) return FileFault(*p, file);
  }
  // Whatever the output says, a build that needs a missing part cannot succeed here (the
  // output may come from a compiler whose messages we do not parse).
  for (const auto& p : ToolchainParts()) {
    if (p.kind == PartKind::kTool || !needed(p) || !SentinelMissing(toolchain, p)) continue;
    return FileFault(p, p.kind == PartKind::kLibraries ? "-l" + p.sentinel : p.sentinel);
  }
  return std::nullopt;
}

}  // namespace kf::build
