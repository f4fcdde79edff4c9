#include <gtest/gtest.h>

#include "eval/eval.h"

namespace kf::eval {
namespace {

// A level-2-style candidate as models write them: the convolution stays in PyTorch (in C++ here,
// through torch::conv2d, and in forward through F.relu), the tail is a kernel of its own.
constexpr const char* kCandidate = R"(import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline
src = r'''
torch::Tensor conv_then_scale(torch::Tensor x, torch::Tensor w) {
  auto y = torch::conv2d(x, w);
  return y;
}
'''
ext = load_inline(name='e', cpp_sources=src, functions=['conv_then_scale'])
class ModelNew(nn.Module):
    def forward(self, x, w):
        return F.relu(ext.conv_then_scale(x, w))
)";

std::vector<std::string> Errors(const std::vector<Diagnostic>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) {
    if (d.severity == Severity::kError) out.push_back(d.code);
  }
  return out;
}

TEST(StaticFindings, KernelBenchPolicyAllowsPyTorchComputeFromForwardAndKernelSources) {
  const extract::Candidate c = extract::Extract(kCandidate);
  ASSERT_TRUE(c.ok());
  EvalOptions strict;
  EXPECT_EQ(Errors(StaticFindings(c, "", strict)), (std::vector<std::string>{"H04", "H01"}));
  EvalOptions kb;
  kb.exec.policy = execute::Policy::kKernelBench;
  const auto ds = StaticFindings(c, "", kb);
  EXPECT_TRUE(Errors(ds).empty());
  ASSERT_EQ(ds.size(), 2u);  // still listed, as notes
  for (const auto& d : ds) {
    EXPECT_EQ(d.severity, Severity::kInfo);
    EXPECT_EQ(d.message.rfind("allowed under the kernelbench policy: ", 0), 0u) << d.message;
  }
  // The tricks stay cheats under both policies.
  const extract::Candidate patch =
      extract::Extract(std::string(kCandidate) + "import time\ntime.perf_counter = lambda: 0\n");
  EXPECT_EQ(Errors(StaticFindings(patch, "", kb)), (std::vector<std::string>{"H08"}));
}

// CUDA graphs: cheat H07 under strict in both spellings. Under kernelbench (KernelBench's harness
// accepts graphs) a graph the kernel sources build and launch is the note H07_graph, listed;
// Python's graph APIs and side streams stay H07.
TEST(StaticFindings, KernelBenchPolicyNotesCudaGraphsStrictCallsThemH07) {
  const std::string kernel_graph = R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
src = r'''
torch::Tensor replay(torch::Tensor x, int64_t exec) {
  cudaGraphLaunch(reinterpret_cast<cudaGraphExec_t>(exec), at::cuda::getCurrentCUDAStream());
  return x;
}
'''
ext = load_inline(name='e', cpp_sources=src, functions=['replay'])
class ModelNew(nn.Module):
    def forward(self, x):
        return ext.replay(x, 0)
)";
  const extract::Candidate c = extract::Extract(kernel_graph);
  ASSERT_TRUE(c.ok());
  EvalOptions strict;
  EXPECT_EQ(Errors(StaticFindings(c, "", strict)), (std::vector<std::string>{"H07"}));
  EvalOptions kb;
  kb.exec.policy = execute::Policy::kKernelBench;
  const auto ds = StaticFindings(c, "", kb);
  EXPECT_TRUE(Errors(ds).empty());
  ASSERT_EQ(ds.size(), 1u);  // listed, as a note
  EXPECT_EQ(ds[0].code, "H07_graph");
  EXPECT_EQ(ds[0].severity, Severity::kInfo);
  EXPECT_EQ(ds[0].message.rfind("allowed under the kernelbench policy: ", 0), 0u) << ds[0].message;
  for (const char* python : {"def capture():\n    return torch.cuda.CUDAGraph()\n",
                             "def side():\n    return torch.cuda.Stream()\n"}) {
    const extract::Candidate more = extract::Extract(kernel_graph + python);
    EXPECT_EQ(Errors(StaticFindings(more, "", strict)), (std::vector<std::string>{"H07", "H07"}));
    EXPECT_EQ(Errors(StaticFindings(more, "", kb)), (std::vector<std::string>{"H07"})) << python;
  }
}

TEST(StaticFindings, PrecisionRulesFollowTheProblem) {
  const extract::Candidate c = extract::Extract(
      std::string(kCandidate) + "def cast(x):\n    return x.half()\n");
  EvalOptions kb;
  kb.exec.policy = execute::Policy::kKernelBench;
  EXPECT_EQ(Errors(StaticFindings(c, "def get_inputs(): return [torch.randn(4)]", kb)),
            (std::vector<std::string>{"H13"}));
  EXPECT_TRUE(
      Errors(StaticFindings(c, "def get_inputs(): return [torch.randn(4).half()]", kb)).empty());
}

}  // namespace
}  // namespace kf::eval
