#include "build/environment.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kf::build {
namespace {

using nlohmann::json;

// What the build worker reports on a machine with everything a CPU build needs.
json CompleteCpu() {
  return {{"headers",
           {{"torch/extension.h", "/usr/include/torch/extension.h"},
            {"pybind11/pybind11.h", "/usr/include/pybind11/pybind11.h"},
            {"Python.h", "/usr/include/python3.11/Python.h"}}},
          {"libraries", {{"torch", "/usr/lib/python3/dist-packages/torch/lib/libtorch.so"}}},
          {"cxx", "c++"},
          {"cxx_path", "/usr/bin/c++"},
          {"cxx_works", true},
          {"ninja", "/usr/bin/ninja"}};
}

json CompleteCuda() {
  json j = CompleteCpu();
  j["headers"]["cuda_runtime.h"] = "/usr/local/cuda/include/cuda_runtime.h";
  j["libraries"]["cudart"] = "/usr/local/cuda/lib64/libcudart.so";
  j["nvcc"] = "/usr/local/cuda/bin/nvcc";
  return j;
}

const char* kNoTorchHeader =
    "Error building extension 'relu_ext': [1/2] c++ -MMD -MF main.o.d ...\n"
    "FAILED: main.o\n"
    "/root/.cache/kforge/artifacts/ab.tmp/main.cpp:1:10: fatal error: torch/extension.h: "
    "No such file or directory\n"
    "    1 | #include <torch/extension.h>\n"
    "      |          ^~~~~~~~~~~~~~~~~~~\n"
    "compilation terminated.\n";

TEST(MissingFiles, GccClangNvccAndLinker) {
  auto files = MissingFiles(
      std::string(kNoTorchHeader) +
      "/tmp/b/cuda.cu:3:10: fatal error: cuda_fp16.h: No such file or directory\n"
      "main.cpp:2:10: fatal error: 'pybind11/pybind11.h' file not found\n"
      "/tmp/b/cuda.cu(4): catastrophic error: cannot open source file \"mma.h\"\n"
      "/usr/bin/ld: cannot find -ltorch_cpu: No such file or directory\n"
      "/usr/bin/ld.gold: cannot find -lcudart\n"
      "main.cpp:9:5: error: 'y' was not declared in this scope\n");
  EXPECT_EQ(files, (std::vector<std::string>{"torch/extension.h", "cuda_fp16.h",
                                             "pybind11/pybind11.h", "mma.h", "-ltorch_cpu",
                                             "-lcudart"}));
}

TEST(ClassifyBuildFailure, MissingTorchHeadersAreTheEnvironment) {
  json tc = CompleteCpu();
  tc["headers"]["torch/extension.h"] = nullptr;
  auto f = ClassifyBuildFailure(kNoTorchHeader, tc, false);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->part, "torch_headers");
  EXPECT_EQ(f->missing, "torch/extension.h");
  EXPECT_EQ(f->fix, "apt-get install libtorch-dev");
  EXPECT_EQ(f->Message().rfind("environment: torch/extension.h is missing", 0), 0u) << f->Message();
  EXPECT_NE(f->Message().find("apt-get install libtorch-dev"), std::string::npos);
}

TEST(ClassifyBuildFailure, APrivateHeaderIsTheCandidates) {
  const char* out = "main.cpp:3:10: fatal error: my_private_header.h: No such file or directory\n";
  EXPECT_FALSE(ClassifyBuildFailure(out, CompleteCpu(), false).has_value());
  EXPECT_FALSE(ClassifyBuildFailure(out, CompleteCuda(), true).has_value());
}

TEST(ClassifyBuildFailure, AToolchainPrefixIsNotEnoughWhenThePartIsThere) {
  // A candidate cannot earn infra_error (no reward, never cached) by naming a header in
  // torch's folders that this torch does not have: torch's headers were found.
  const char* out = "main.cpp:3:10: fatal error: torch/no_such_header.h: No such file or directory\n";
  EXPECT_FALSE(ClassifyBuildFailure(out, CompleteCpu(), false).has_value());
  // Forged text in a compile error proves nothing either.
  const char* forged =
      "main.cpp:4:2: error: #error \"main.cpp:1:10: fatal error: torch/extension.h: No such file "
      "or directory\"\n";
  EXPECT_FALSE(ClassifyBuildFailure(forged, CompleteCpu(), false).has_value());
}

TEST(ClassifyBuildFailure, PybindAndPythonHeadersReachedThroughTorch) {
  json tc = CompleteCpu();
  tc["headers"]["pybind11/pybind11.h"] = nullptr;
  auto f = ClassifyBuildFailure(
      "/usr/include/torch/csrc/utils/pybind.h:7:10: fatal error: pybind11/pybind11.h: No such "
      "file or directory\n",
      tc, false);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->part, "pybind11");
  EXPECT_EQ(f->fix, "apt-get install pybind11-dev");

  tc = CompleteCpu();
  tc["headers"]["Python.h"] = nullptr;
  f = ClassifyBuildFailure(
      "/usr/include/pybind11/detail/common.h:266:10: fatal error: Python.h: No such file or "
      "directory\n",
      tc, false);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->part, "python_headers");
  EXPECT_EQ(f->fix, "apt-get install python3-dev");
}

TEST(ClassifyBuildFailure, CudaHeadersCountOnlyForCudaBuilds) {
  json tc = CompleteCuda();
  tc["headers"]["cuda_runtime.h"] = nullptr;
  const char* out = "/tmp/b/cuda.cu:2:10: fatal error: cuda_fp16.h: No such file or directory\n";
  auto f = ClassifyBuildFailure(out, tc, true);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->part, "cuda_headers");
  EXPECT_EQ(f->missing, "cuda_fp16.h");
  EXPECT_NE(f->fix.find("nvidia-cuda-toolkit"), std::string::npos);
  // A C++-only build that includes a CUDA header asks for what its backend does not have.
  EXPECT_FALSE(ClassifyBuildFailure(out, tc, false).has_value());
  // With the CUDA toolkit there, a missing CUDA header is the candidate's (a newer one).
  EXPECT_FALSE(ClassifyBuildFailure(out, CompleteCuda(), true).has_value());
}

TEST(ClassifyBuildFailure, MissingLibraries) {
  json tc = CompleteCpu();
  tc["libraries"]["torch"] = nullptr;
  auto f = ClassifyBuildFailure("/usr/bin/ld: cannot find -ltorch_cpu: No such file or directory\n",
                                tc, false);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->part, "torch_libraries");
  EXPECT_EQ(f->missing, "-ltorch_cpu");
  // A library the candidate asked for that no toolchain part has is the candidate's.
  EXPECT_FALSE(
      ClassifyBuildFailure("/usr/bin/ld: cannot find -lmylib\n", CompleteCpu(), false).has_value());
  // -Wl,-Bstatic makes the linker look for libtorch.a: libtorch.so being there, not ours.
  EXPECT_FALSE(
      ClassifyBuildFailure("/usr/bin/ld: cannot find -ltorch\n", CompleteCpu(), false).has_value());
}

TEST(ClassifyBuildFailure, AMissingPartBlamesTheEnvironmentWhateverTheOutputSays) {
  json tc = CompleteCpu();
  tc["headers"]["torch/extension.h"] = nullptr;
  auto f = ClassifyBuildFailure("some compiler's message we do not parse\n", tc, false);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->part, "torch_headers");
  EXPECT_EQ(f->missing, "torch/extension.h");
}

TEST(ClassifyBuildFailure, CompilerNinjaAndNvcc) {
  json tc = CompleteCpu();
  tc["cxx_path"] = nullptr;
  auto f = ClassifyBuildFailure("/bin/sh: 1: c++: not found\n", tc, false);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->part, "compiler");
  EXPECT_EQ(f->fix, "apt-get install g++");

  tc = CompleteCpu();
  tc["cxx_works"] = false;  // e.g. g++ without cc1plus
  f = ClassifyBuildFailure("c++: fatal error: cannot execute 'cc1plus'\n", tc, false);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->part, "compiler");

  tc = CompleteCpu();
  tc["ninja"] = nullptr;
  f = ClassifyBuildFailure("RuntimeError: Ninja is required to load C++ extensions\n", tc, false);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->fix, "apt-get install ninja-build");

  tc = CompleteCuda();
  tc["nvcc"] = nullptr;
  EXPECT_EQ(ClassifyBuildFailure("", tc, true)->part, "nvcc");
  EXPECT_FALSE(ClassifyBuildFailure("", tc, false).has_value());
}

TEST(ClassifyBuildFailure, UnknownFactsBlameNothing) {
  EXPECT_FALSE(ClassifyBuildFailure(kNoTorchHeader, json::object(), false).has_value());
  EXPECT_FALSE(ClassifyBuildFailure(kNoTorchHeader, nullptr, false).has_value());
  EXPECT_FALSE(ClassifyBuildFailure("main.cpp:9:5: error: 'y' was not declared in this scope\n",
                                    CompleteCpu(), false)
                   .has_value());
}

TEST(ToolchainProbe, TheBackendsParts) {
  json cpu = ToolchainProbe("cpu");
  EXPECT_EQ(cpu["headers"], json({"torch/extension.h", "pybind11/pybind11.h", "Python.h"}));
  EXPECT_EQ(cpu["libraries"], json({"torch"}));
  json cuda = ToolchainProbe("cuda");
  EXPECT_NE(std::find(cuda["headers"].begin(), cuda["headers"].end(), "cuda_runtime.h"),
            cuda["headers"].end());
  EXPECT_NE(std::find(cuda["libraries"].begin(), cuda["libraries"].end(), "cudart"),
            cuda["libraries"].end());
}

TEST(ToolchainParts, EveryPartHasAFix) {
  for (const auto& p : ToolchainParts()) {
    EXPECT_FALSE(p.fix.empty()) << p.id;
    EXPECT_EQ(FindPart(p.id), &p);
    EXPECT_EQ(p.kind == PartKind::kTool, p.sentinel.empty()) << p.id;
  }
  EXPECT_EQ(FindPart("no_such_part"), nullptr);
}

}  // namespace
}  // namespace kf::build
