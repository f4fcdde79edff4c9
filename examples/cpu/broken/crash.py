# kforge-problem: level1/relu.py
# kforge-expect: runtime_error
# Broken CPU candidate: writes through an output pointer that was never set (null), so it segfaults.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>

// Meant to point at a reusable output buffer, but nothing ever assigns it.
static float* volatile g_out_buffer = nullptr;

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat, "contiguous float32 expected");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = g_out_buffer;
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return y;
}
"""

relu_ext = load_inline(
    name="kforge_cpu_broken_crash",
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
