# kforge-problem: level2/layernorm_gelu_residual.py
# kforge-expect: ok
# Honest CPU candidate: x + gelu_tanh(layernorm(x)) fused into one pass per row.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ln_gelu_res_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor ln_gelu_residual_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat && x.is_contiguous(), "bad x");
    const int64_t cols = x.size(-1);
    TORCH_CHECK(weight.numel() == cols && bias.numel() == cols, "weight/bias size mismatch");
    auto y = torch::empty_like(x);
    const int64_t rows = x.numel() / cols;
    const float* in = x.data_ptr<float>();
    const float* w = weight.data_ptr<float>();
    const float* b = bias.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const float k0 = 0.7978845608028654f;  // sqrt(2/pi)
    const float k1 = 0.044715f;
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = in + r * cols;
        float* yr = out + r * cols;
        double s = 0.0, ss = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            s += xr[c];
            ss += static_cast<double>(xr[c]) * xr[c];
        }
        const double mean = s / cols;
        double var = ss / cols - mean * mean;
        if (var < 0.0) var = 0.0;
        const float rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
        const float fmean = static_cast<float>(mean);
        for (int64_t c = 0; c < cols; ++c) {
            const float h = (xr[c] - fmean) * rstd * w[c] + b[c];
            // tanh(u) = 1 - 2 / (exp(2u) + 1); saturates correctly when exp overflows or underflows
            const float u = k0 * (h + k1 * h * h * h);
            const float t = 1.0f - 2.0f / (std::exp(2.0f * u) + 1.0f);
            const float g = 0.5f * h * (1.0f + t);
            yr[c] = xr[c] + g;
        }
    }
    return y;
}
"""

ln_gelu_res_ext = load_inline(
    name="kforge_cpu_layernorm_gelu_residual",
    cpp_sources=ln_gelu_res_source,
    functions=["ln_gelu_residual_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return ln_gelu_res_ext.ln_gelu_residual_forward(
            x.contiguous(), self.norm.weight, self.norm.bias, self.norm.eps
        )
