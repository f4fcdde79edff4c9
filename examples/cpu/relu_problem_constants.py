# kforge-problem: level1/relu.py
# kforge-expect: ok
# Uses the problem's constant `dim` without defining it, as model-written KernelBench candidates
# do: KernelBench's harness execs the problem and the candidate into one namespace, and so does
# kforge (the problem's names first, the candidate's own over them).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
torch::Tensor relu_forward(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return y;
}
"""
ext = load_inline(name="kforge_cpu_relu_problem_constants", cpp_sources=src, functions=["relu_forward"])
ROW = dim  # the problem's constant, not defined here (KernelBench runs both in one namespace)


class ModelNew(nn.Module):
    def forward(self, x):
        assert x.shape[-1] > 0 and ROW > 0
        return ext.relu_forward(x.contiguous())
