# kforge-problem: level1/matmul.py
# kforge-expect: ok
# Honest CPU candidate: i-k-j ordered matmul with a cache-blocked k loop (the inner loop vectorises).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

matmul_source = r"""
#include <torch/extension.h>

torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.device().is_cpu() && b.device().is_cpu(), "CPU tensors expected");
    TORCH_CHECK(a.scalar_type() == torch::kFloat && b.scalar_type() == torch::kFloat, "float32 expected");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "shape mismatch");
    TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "contiguous inputs expected");
    const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
    auto c = torch::empty({M, N}, a.options());
    const float* A = a.data_ptr<float>();
    const float* B = b.data_ptr<float>();
    float* C = c.data_ptr<float>();
    for (int64_t i = 0; i < M * N; ++i) C[i] = 0.0f;
    const int64_t KB = 128;
    for (int64_t k0 = 0; k0 < K; k0 += KB) {
        const int64_t k1 = k0 + KB < K ? k0 + KB : K;
        for (int64_t i = 0; i < M; ++i) {
            float* __restrict__ crow = C + i * N;
            const float* arow = A + i * K;
            for (int64_t k = k0; k < k1; ++k) {
                const float av = arow[k];
                const float* __restrict__ brow = B + k * N;
                for (int64_t j = 0; j < N; ++j) crow[j] += av * brow[j];
            }
        }
    }
    return c;
}
"""

matmul_ext = load_inline(
    name="kforge_cpu_matmul",
    cpp_sources=matmul_source,
    functions=["matmul_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return matmul_ext.matmul_forward(a.contiguous(), b.contiguous())
