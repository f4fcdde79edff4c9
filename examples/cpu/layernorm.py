# kforge-problem: level1/layernorm.py
# kforge-expect: ok
# Honest CPU candidate: LayerNorm with double-precision mean and biased variance, then affine.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

layernorm_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat && x.is_contiguous(), "bad x");
    const int64_t cols = x.size(-1);
    TORCH_CHECK(weight.numel() == cols && bias.numel() == cols, "weight/bias size mismatch");
    TORCH_CHECK(weight.is_contiguous() && bias.is_contiguous(), "weight/bias must be contiguous");
    auto y = torch::empty_like(x);
    const int64_t rows = x.numel() / cols;
    const float* in = x.data_ptr<float>();
    const float* w = weight.data_ptr<float>();
    const float* b = bias.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = in + r * cols;
        float* yr = out + r * cols;
        double s = 0.0;
        for (int64_t c = 0; c < cols; ++c) s += xr[c];
        const double mean = s / cols;
        double v = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const double d = xr[c] - mean;
            v += d * d;
        }
        const float rstd = static_cast<float>(1.0 / std::sqrt(v / cols + eps));
        const float fmean = static_cast<float>(mean);
        for (int64_t c = 0; c < cols; ++c) yr[c] = (xr[c] - fmean) * rstd * w[c] + b[c];
    }
    return y;
}
"""

layernorm_ext = load_inline(
    name="kforge_cpu_layernorm",
    cpp_sources=layernorm_source,
    functions=["layernorm_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return layernorm_ext.layernorm_forward(
            x.contiguous(), self.norm.weight, self.norm.bias, self.norm.eps
        )
