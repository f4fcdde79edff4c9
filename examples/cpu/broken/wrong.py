# kforge-problem: level1/softmax.py
# kforge-expect: incorrect
# Broken CPU candidate: softmax whose normalising sum stops one column early (off-by-one).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor softmax_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat, "contiguous float32 expected");
    auto y = torch::empty_like(x);
    const int64_t cols = x.size(-1);
    const int64_t rows = x.numel() / cols;
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = in + r * cols;
        float* yr = out + r * cols;
        float m = xr[0];
        for (int64_t c = 1; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
        float s = 0.0f;
        for (int64_t c = 0; c < cols - 1; ++c) s += std::exp(xr[c] - m);
        for (int64_t c = 0; c < cols; ++c) yr[c] = std::exp(xr[c] - m) / s;
    }
    return y;
}
"""

softmax_ext = load_inline(
    name="kforge_cpu_broken_wrong",
    cpp_sources=softmax_source,
    functions=["softmax_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_ext.softmax_forward(x.contiguous())
