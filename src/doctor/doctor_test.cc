#include "doctor/doctor.h"

#include <gtest/gtest.h>

#include "build/environment.h"

namespace kf::doctor {
namespace {

using nlohmann::json;

// A Debian 12 machine with everything the CPU backend needs, as the runner reports it.
Facts HealthyCpu() {
  Facts f;
  f.backend = "cpu";
  f.python = "/usr/bin/python3";
  f.runner_dir = "/src/kforge/runner";
  f.runner = {
      {"python", {{"executable", "/usr/bin/python3"}, {"version", "3.11.2"}}},
      {"torch", {{"version", "1.13.0a0"}, {"cuda", nullptr}, {"path", "/usr/lib/python3/dist-packages/torch"}}},
      {"toolchain",
       {{"headers",
         {{"torch/extension.h", "/usr/include/torch/extension.h"},
          {"pybind11/pybind11.h", "/usr/include/pybind11/pybind11.h"},
          {"Python.h", "/usr/include/python3.11/Python.h"}}},
        {"libraries", {{"torch", "/usr/lib/python3/dist-packages/torch/lib/libtorch.so"}}},
        {"cxx", "c++"},
        {"cxx_path", "/usr/bin/c++"},
        {"cxx_works", true},
        {"ninja", "/usr/bin/ninja"},
        {"nvcc", nullptr}}},
      {"cxx_version", "c++ (Debian 12.2.0-14) 12.2.0"},
      {"nvcc_release", ""}};
  f.gpu_nodes = 0;
  f.sandbox = {{"root", true},          {"landlock_abi", 6},      {"user_namespace", true},
               {"net_namespace", true}, {"pid_namespace", true},  {"mount_namespace", true},
               {"seccomp", true},       {"processes", "bounded by pid_max"}};
  f.sandbox_library = "/src/kforge/build/libkforge_sandbox.so";
  f.redis_server = "/usr/bin/redis-server";
  return f;
}

// An H200 host with a pip torch for CUDA 12.4 and the matching toolkit.
Facts HealthyCuda() {
  Facts f = HealthyCpu();
  f.backend = "cuda";
  f.python = "/opt/venv/bin/python";
  f.runner["torch"] = {{"version", "2.5.1"}, {"cuda", "12.4"}, {"device_count", 8},
                       {"path", "/opt/venv/lib/python3.11/site-packages/torch"}};
  auto& tc = f.runner["toolchain"];
  tc["headers"]["cuda_runtime.h"] = "/usr/local/cuda/include/cuda_runtime.h";
  tc["libraries"]["cudart"] = "/usr/local/cuda/lib64/libcudart.so";
  tc["nvcc"] = "/usr/local/cuda/bin/nvcc";
  f.runner["nvcc_release"] = "Cuda compilation tools, release 12.4, V12.4.131";
  f.gpu_nodes = 8;
  return f;
}

// A copy: callers pass Decide's result straight in.
Check Get(const std::vector<Check>& checks, const std::string& name) {
  for (const auto& c : checks) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no check " << name;
  return {"<none>", State::kFail, "no such check", ""};
}

TEST(Decide, AHealthyCpuMachinePasses) {
  auto checks = Decide(HealthyCpu());
  EXPECT_FALSE(AnyFailed(checks));
  for (const char* name : {"runner", "python", "torch", "torch_headers", "pybind11",
                           "python_headers", "torch_libraries", "compiler", "ninja",
                           "sandbox_library", "sandbox_namespaces", "sandbox_landlock",
                           "sandbox_seccomp", "redis"}) {
    EXPECT_EQ(Get(checks, name).state, State::kOk) << name << ": " << Get(checks, name).detail;
  }
  // What only the CUDA backend needs is skipped, and says so.
  for (const char* name : {"nvcc", "cuda_headers", "cuda_libraries", "gpus"}) {
    EXPECT_EQ(Get(checks, name).state, State::kSkip) << name;
    EXPECT_NE(Get(checks, name).detail.find("not needed for --backend cpu"), std::string::npos);
  }
  EXPECT_NE(Get(checks, "torch").detail.find("1.13.0a0, CPU only"), std::string::npos);
}

TEST(Decide, MissingHeadersGetTheBuildsFixes) {
  Facts f = HealthyCpu();
  f.runner["toolchain"]["headers"]["torch/extension.h"] = nullptr;
  f.runner["toolchain"]["headers"]["Python.h"] = nullptr;
  auto checks = Decide(f);
  EXPECT_TRUE(AnyFailed(checks));
  Check torch = Get(checks, "torch_headers");
  EXPECT_EQ(torch.state, State::kFail);
  EXPECT_EQ(torch.fix, "apt-get install libtorch-dev");
  EXPECT_NE(torch.detail.find("torch/extension.h is not found"), std::string::npos);
  EXPECT_EQ(Get(checks, "python_headers").fix, "apt-get install python3-dev");
  EXPECT_EQ(Get(checks, "pybind11").state, State::kOk);
  // One table: the fix an infra_error verdict carries for the same missing file.
  auto fault = build::ClassifyBuildFailure(
      "main.cpp:1:10: fatal error: torch/extension.h: No such file or directory\n",
      f.runner["toolchain"], false);
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->fix, torch.fix);
}

TEST(Decide, MissingPybindAndLibraries) {
  Facts f = HealthyCpu();
  f.runner["toolchain"]["headers"]["pybind11/pybind11.h"] = nullptr;
  f.runner["toolchain"]["libraries"]["torch"] = nullptr;
  auto checks = Decide(f);
  EXPECT_EQ(Get(checks, "pybind11").fix, "apt-get install pybind11-dev");
  EXPECT_EQ(Get(checks, "torch_libraries").state, State::kFail);
  EXPECT_NE(Get(checks, "torch_libraries").detail.find("-ltorch"), std::string::npos);
}

TEST(Decide, NoInterpreter) {
  Facts f = HealthyCpu();
  f.python = "/opt/nowhere/python";
  f.runner = nullptr;
  f.runner_error = "no such interpreter (not on PATH, or not executable)";
  auto checks = Decide(f);
  Check py = Get(checks, "python");
  EXPECT_EQ(py.state, State::kFail);
  EXPECT_NE(py.detail.find("/opt/nowhere/python: no such interpreter"), std::string::npos);
  EXPECT_NE(py.fix.find("--python PATH"), std::string::npos);
  for (const char* name : {"torch", "torch_headers", "compiler", "ninja"}) {
    EXPECT_EQ(Get(checks, name).state, State::kSkip) << name;
  }
  // What does not need Python is still checked.
  EXPECT_EQ(Get(checks, "sandbox_seccomp").state, State::kOk);
}

TEST(Decide, NoRunner) {
  Facts f = HealthyCpu();
  f.runner_found = false;
  f.runner = nullptr;
  auto checks = Decide(f);
  EXPECT_EQ(Get(checks, "runner").state, State::kFail);
  EXPECT_NE(Get(checks, "runner").fix.find("KFORGE_RUNNER_DIR"), std::string::npos);
  EXPECT_EQ(Get(checks, "python").state, State::kSkip);
}

TEST(Decide, TorchNotImportable) {
  Facts f = HealthyCpu();
  f.runner["torch"] = {{"error", "ModuleNotFoundError: No module named 'torch'"}};
  Check c = Get(Decide(f), "torch");
  EXPECT_EQ(c.state, State::kFail);
  EXPECT_NE(c.detail.find("No module named 'torch'"), std::string::npos);
  EXPECT_NE(c.fix.find("apt-get install python3-torch"), std::string::npos);
}

TEST(Decide, CompilerMissingOrBroken) {
  Facts f = HealthyCpu();
  f.runner["toolchain"]["cxx_path"] = nullptr;
  Check missing = Get(Decide(f), "compiler");
  EXPECT_EQ(missing.state, State::kFail);
  EXPECT_EQ(missing.fix, "apt-get install g++");
  f = HealthyCpu();
  f.runner["toolchain"]["cxx_works"] = false;
  EXPECT_EQ(Get(Decide(f), "compiler").state, State::kFail);
  f.runner["toolchain"]["cxx_works"] = nullptr;  // the test compile timed out: cannot tell
  EXPECT_EQ(Get(Decide(f), "compiler").state, State::kWarn);
  f = HealthyCpu();
  f.runner["toolchain"]["ninja"] = nullptr;
  EXPECT_EQ(Get(Decide(f), "ninja").fix, "apt-get install ninja-build");
}

TEST(Decide, AHealthyCudaMachinePasses) {
  auto checks = Decide(HealthyCuda());
  EXPECT_FALSE(AnyFailed(checks));
  for (const char* name : {"torch", "nvcc", "cuda_headers", "cuda_libraries", "gpus"}) {
    EXPECT_EQ(Get(checks, name).state, State::kOk) << name << ": " << Get(checks, name).detail;
  }
  EXPECT_NE(Get(checks, "gpus").detail.find("8 /dev/nvidiaN node(s), torch sees 8"),
            std::string::npos);
}

TEST(Decide, NvccMustMatchTorchsCuda) {
  Facts f = HealthyCuda();
  f.runner["nvcc_release"] = "Cuda compilation tools, release 11.8, V11.8.89";
  Check major = Get(Decide(f), "nvcc");
  EXPECT_EQ(major.state, State::kFail);
  EXPECT_NE(major.detail.find("nvcc 11.8"), std::string::npos);
  EXPECT_NE(major.detail.find("CUDA 12.4"), std::string::npos);
  EXPECT_NE(major.fix.find("12.4"), std::string::npos);
  f.runner["nvcc_release"] = "Cuda compilation tools, release 12.6, V12.6.20";
  EXPECT_EQ(Get(Decide(f), "nvcc").state, State::kWarn);
  f.runner["toolchain"]["nvcc"] = nullptr;
  Check none = Get(Decide(f), "nvcc");
  EXPECT_EQ(none.state, State::kFail);
  EXPECT_NE(none.fix.find("nvidia-cuda-toolkit"), std::string::npos);
  EXPECT_EQ(none.fix, build::FindPart("nvcc")->fix);
}

TEST(Decide, NvccOnTheCpuBackendIsOnlyReported) {
  Facts f = HealthyCpu();
  f.runner["toolchain"]["nvcc"] = "/usr/local/cuda/bin/nvcc";
  f.runner["nvcc_release"] = "Cuda compilation tools, release 13.0, V13.0.88";
  Check c = Get(Decide(f), "nvcc");
  EXPECT_EQ(c.state, State::kSkip);
  EXPECT_NE(c.detail.find("nvcc 13.0 at /usr/local/cuda/bin/nvcc"), std::string::npos);
}

TEST(Decide, CudaBackendNeedsACudaTorchAndGpus) {
  Facts f = HealthyCuda();
  f.runner["torch"]["cuda"] = nullptr;
  EXPECT_EQ(Get(Decide(f), "torch").state, State::kFail);
  f = HealthyCuda();
  f.gpu_nodes = 0;
  EXPECT_EQ(Get(Decide(f), "gpus").state, State::kFail);
  f = HealthyCuda();
  f.runner["torch"]["device_count"] = 0;
  f.runner["torch"]["device_error"] = "RuntimeError: driver too old";
  Check c = Get(Decide(f), "gpus");
  EXPECT_EQ(c.state, State::kFail);
  EXPECT_NE(c.detail.find("driver too old"), std::string::npos);
  f = HealthyCuda();
  f.runner["toolchain"]["headers"]["cuda_runtime.h"] = nullptr;
  EXPECT_EQ(Get(Decide(f), "cuda_headers").fix, build::FindPart("cuda_headers")->fix);
}

TEST(Decide, SandboxFeatures) {
  Facts f = HealthyCpu();
  f.sandbox["seccomp"] = false;
  f.sandbox["landlock_abi"] = 0;
  auto checks = Decide(f);
  EXPECT_EQ(Get(checks, "sandbox_seccomp").state, State::kFail);
  // Root without Landlock still confines the filesystem (read-only mounts): a warning.
  EXPECT_EQ(Get(checks, "sandbox_landlock").state, State::kWarn);
  EXPECT_NE(Get(checks, "sandbox_landlock").detail.find("read-only mounts"), std::string::npos);

  f = HealthyCpu();
  f.sandbox["root"] = false;
  f.sandbox["user_namespace"] = false;
  f.sandbox["net_namespace"] = false;
  f.sandbox["pid_namespace"] = false;
  f.sandbox["landlock_abi"] = 0;
  checks = Decide(f);
  Check ns = Get(checks, "sandbox_namespaces");
  EXPECT_EQ(ns.state, State::kFail);
  EXPECT_NE(ns.detail.find("user namespaces refused"), std::string::npos);
  EXPECT_NE(ns.fix.find("unprivileged_userns_clone"), std::string::npos);
  EXPECT_NE(Get(checks, "sandbox_landlock").detail.find("NOT confined"), std::string::npos);

  f = HealthyCpu();
  f.sandbox = nullptr;
  f.sandbox_library = "";
  checks = Decide(f);
  EXPECT_EQ(Get(checks, "sandbox_library").state, State::kFail);
  EXPECT_EQ(Get(checks, "sandbox_seccomp").state, State::kFail);
}

TEST(Decide, RedisIsAWarningOnly) {
  Facts f = HealthyCpu();
  f.redis_server = "";
  auto checks = Decide(f);
  EXPECT_EQ(Get(checks, "redis").state, State::kWarn);
  EXPECT_EQ(Get(checks, "redis").fix, "apt-get install redis-server");
  EXPECT_FALSE(AnyFailed(checks));
}

TEST(Report, JsonAndText) {
  Facts f = HealthyCpu();
  f.runner["toolchain"]["headers"]["torch/extension.h"] = nullptr;
  auto checks = Decide(f);
  json j = ToJson(f, checks);
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["ok"], false);
  ASSERT_TRUE(j["checks"].is_array());
  bool seen = false;
  for (const auto& c : j["checks"]) {
    ASSERT_TRUE(c.contains("name") && c.contains("state") && c.contains("detail") &&
                c.contains("fix"));
    if (c["name"] == "torch_headers") {
      seen = true;
      EXPECT_EQ(c["state"], "fail");
      EXPECT_EQ(c["fix"], "apt-get install libtorch-dev");
    }
  }
  EXPECT_TRUE(seen);
  std::string text = Render(f, checks);
  EXPECT_NE(text.find("FAIL  torch_headers"), std::string::npos) << text;
  EXPECT_NE(text.find("fix: apt-get install libtorch-dev"), std::string::npos) << text;
  EXPECT_NE(text.find("1 failed"), std::string::npos) << text;
}

}  // namespace
}  // namespace kf::doctor
