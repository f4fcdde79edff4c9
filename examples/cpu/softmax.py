# kforge-problem: level1/softmax.py
# kforge-expect: ok
# Honest CPU candidate: row-wise softmax, max-subtracted, double-precision row sum.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor softmax_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat, "x must be a CPU float32 tensor");
    TORCH_CHECK(x.is_contiguous() && x.dim() >= 1, "x must be contiguous with at least one dim");
    auto y = torch::empty_like(x);
    const int64_t cols = x.size(-1);
    const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = in + r * cols;
        float* yr = out + r * cols;
        float m = xr[0];
        for (int64_t c = 1; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
        double s = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const float e = std::exp(xr[c] - m);
            yr[c] = e;
            s += e;
        }
        const float inv = static_cast<float>(1.0 / s);
        for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
    }
    return y;
}
"""

softmax_ext = load_inline(
    name="kforge_cpu_softmax",
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
