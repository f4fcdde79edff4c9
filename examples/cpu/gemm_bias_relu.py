# kforge-problem: level2/gemm_bias_relu.py
# kforge-expect: ok
# Honest CPU candidate: one fused pass computing relu(x @ W^T + b) * scale per output row.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gemm_bias_relu_source = r"""
#include <torch/extension.h>
#include <vector>

torch::Tensor gemm_bias_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double scale) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat, "x must be CPU float32");
    TORCH_CHECK(x.is_contiguous() && weight.is_contiguous() && bias.is_contiguous(), "contiguous expected");
    const int64_t M = x.size(0), K = x.size(1), N = weight.size(0);
    TORCH_CHECK(weight.size(1) == K && bias.numel() == N, "shape mismatch");
    const float* X = x.data_ptr<float>();
    const float* W = weight.data_ptr<float>();
    const float* B = bias.data_ptr<float>();
    // W is [N, K]; a K-major copy lets the inner loop run over contiguous outputs.
    std::vector<float> wt(static_cast<size_t>(K * N));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) wt[k * N + n] = W[n * K + k];
    auto y = torch::empty({M, N}, x.options());
    float* Y = y.data_ptr<float>();
    const float s = static_cast<float>(scale);
    for (int64_t i = 0; i < M; ++i) {
        float* __restrict__ yr = Y + i * N;
        const float* xr = X + i * K;
        for (int64_t n = 0; n < N; ++n) yr[n] = 0.0f;
        for (int64_t k = 0; k < K; ++k) {
            const float xv = xr[k];
            const float* __restrict__ wr = wt.data() + k * N;
            for (int64_t n = 0; n < N; ++n) yr[n] += xv * wr[n];
        }
        for (int64_t n = 0; n < N; ++n) {
            const float v = yr[n] + B[n];
            yr[n] = (v > 0.0f ? v : 0.0f) * s;
        }
    }
    return y;
}
"""

gemm_bias_relu_ext = load_inline(
    name="kforge_cpu_gemm_bias_relu",
    cpp_sources=gemm_bias_relu_source,
    functions=["gemm_bias_relu_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return gemm_bias_relu_ext.gemm_bias_relu_forward(
            x.contiguous(), self.linear.weight, self.linear.bias, self.scale
        )
