#include "backend/backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace kf::backend {
namespace {
namespace fs = std::filesystem;

TEST(Family, ChoicesAndNames) {
  std::optional<Family> f = Family::kTriton;
  EXPECT_TRUE(ParseFamilyChoice("auto", &f));
  EXPECT_FALSE(f.has_value());
  EXPECT_TRUE(ParseFamilyChoice("triton", &f));
  EXPECT_EQ(f, Family::kTriton);
  EXPECT_TRUE(ParseFamilyChoice("load_inline", &f));
  EXPECT_EQ(f, Family::kLoadInline);
  EXPECT_TRUE(ParseFamilyChoice("kernelbench", &f));
  EXPECT_EQ(f, Family::kLoadInline);
  EXPECT_FALSE(ParseFamilyChoice("cuda", &f));
  EXPECT_STREQ(FamilyName(Family::kTriton), "triton");
  // Verdicts of load_inline candidates keep the format name they always had.
  EXPECT_STREQ(CandidateFormat(Family::kLoadInline), "kernelbench");
  EXPECT_STREQ(CandidateFormat(Family::kTriton), "triton");
}

TEST(Device, TableAndLaneNames) {
  ASSERT_NE(FindDevice("cuda"), nullptr);
  ASSERT_NE(FindDevice("cpu"), nullptr);
  EXPECT_EQ(FindDevice("musa"), nullptr);
  EXPECT_EQ(FindDevice("cuda")->TorchDevice(3), "cuda:3");
  EXPECT_EQ(FindDevice("cpu")->TorchDevice(3), "cpu");
  EXPECT_EQ(DeviceNames(), (std::vector<std::string>{"cuda", "cpu"}));
  EXPECT_EQ(VisibleDevices(*FindDevice("cpu")), std::vector<int>{0});
}

TEST(Device, CountsGpuNodesNotOtherNvidiaFiles) {
  fs::path dev = fs::temp_directory_path() / ("kf-dev-" + std::to_string(getpid()));
  fs::create_directories(dev);
  for (const char* n : {"nvidia3", "nvidia6", "nvidiactl", "nvidia-uvm", "null"}) {
    std::ofstream(dev / n) << "";
  }
  EXPECT_EQ(GpuNodes(dev), 2);
  EXPECT_EQ(GpuNodes(dev / "none"), 0);
  fs::remove_all(dev);
}

TEST(Device, ModelFromTheDriversFilesAndTheCpuName) {
  fs::path proc = fs::temp_directory_path() / ("kf-proc-" + std::to_string(getpid()));
  for (const char* bus : {"0000:19:00.0", "0000:3b:00.0", "0000:4c:00.0"}) {
    fs::create_directories(proc / "driver/nvidia/gpus" / bus);
  }
  auto write = [&](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(proc / "driver/nvidia/gpus/0000:19:00.0/information",
        "Model: \t\t NVIDIA H200\nIRQ:   123\n");
  write(proc / "driver/nvidia/gpus/0000:3b:00.0/information", "Model: \t\t NVIDIA H200\n");
  write(proc / "driver/nvidia/gpus/0000:4c:00.0/information", "Model: \t\t NVIDIA H100\n");
  write(proc / "cpuinfo", "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n");
  EXPECT_EQ(DeviceModel(*FindDevice("cuda"), proc), "NVIDIA H100, NVIDIA H200");
  EXPECT_EQ(DeviceModel(*FindDevice("cpu"), proc), "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(DeviceModel(*FindDevice("cuda"), proc / "none"), "unknown GPU");
  fs::remove_all(proc);
}

TEST(Path, LoadInlinePrebuildsTritonCompilesInTheCandidate) {
  const Path& cuda = *FindPath("cuda", Family::kLoadInline);
  const Path& cpu = *FindPath("cpu", Family::kLoadInline);
  const Path& triton = *FindPath("cuda", Family::kTriton);
  EXPECT_EQ(FindPath("musa", Family::kTriton), nullptr);
  EXPECT_EQ(&PathFor(*FindDevice("cuda"), Family::kTriton), &triton);
  EXPECT_TRUE(cuda.Prebuilds());
  EXPECT_TRUE(cpu.Prebuilds());
  EXPECT_FALSE(triton.Prebuilds());
  EXPECT_EQ(cuda.PromptFormat(), "cuda");
  EXPECT_EQ(cpu.PromptFormat(), "cpu");
  EXPECT_EQ(triton.PromptFormat(), "triton");
  EXPECT_EQ(FindPath("cpu", Family::kTriton)->PromptFormat(), "triton");
  EXPECT_EQ(PromptFormat("cuda", std::nullopt), "cuda");
  EXPECT_EQ(PromptFormat("cpu", Family::kLoadInline), "cpu");
  EXPECT_EQ(PromptFormat("cuda", Family::kTriton), "triton");
  EXPECT_EQ(PromptFormat("musa", std::nullopt), "");
  EXPECT_STREQ(cuda.EvidenceField(), "extension_calls");
  EXPECT_STREQ(triton.EvidenceField(), "triton_launches");
  EXPECT_NE(triton.StillCorrectMessage().find("ghost replay"), std::string::npos);
}

TEST(Path, TritonCacheIsOneFolderPerCandidateTextAndEnvironment) {
  const Path& triton = *FindPath("cuda", Family::kTriton);
  const fs::path a = triton.JitCacheDir("/c", "hash-a", "env-1");
  EXPECT_EQ(a.parent_path(), fs::path("/c/triton"));
  EXPECT_EQ(a, triton.JitCacheDir("/c", "hash-a", "env-1"));
  EXPECT_NE(a, triton.JitCacheDir("/c", "hash-b", "env-1"));
  EXPECT_NE(a, triton.JitCacheDir("/c", "hash-a", "env-2"));
  EXPECT_NE(a, FindPath("cpu", Family::kTriton)->JitCacheDir("/c", "hash-a", "env-1"));
  EXPECT_TRUE(FindPath("cuda", Family::kLoadInline)->JitCacheDir("/c", "hash-a", "e").empty());
}

}  // namespace
}  // namespace kf::backend
