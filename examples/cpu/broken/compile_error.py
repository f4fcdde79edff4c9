# kforge-problem: level1/relu.py
# kforge-expect: compile_error
# Broken CPU candidate: assigns the untyped void* from data_ptr() to float* (a C++ type error).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr();
    float* out = y.data_ptr();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return y;
}
"""

relu_ext = load_inline(
    name="kforge_cpu_broken_compile_error",
    cpp_sources=relu_source,
    functions=["relu_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return relu_ext.relu_forward(x.contiguous())
