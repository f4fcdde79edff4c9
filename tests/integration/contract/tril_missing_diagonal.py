# kforge-problem: tril_matmul.py
# kforge-expect: incorrect
# Wrong on inputs the problem does produce: the diagonal term k = i is left out.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>

torch::Tensor tril_matmul(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.scalar_type() == torch::kFloat && b.scalar_type() == torch::kFloat, "float32");
    TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && a.dim() == 2, "contiguous 2-d");
    const int64_t n = a.size(0);
    auto c = torch::empty({n, n}, a.options());
    const float* A = a.data_ptr<float>();
    const float* B = b.data_ptr<float>();
    float* C = c.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            float s = 0.0f;
            if (j <= i) {
                for (int64_t k = j; k < i; ++k) s += A[i * n + k] * B[k * n + j];
            }
            C[i * n + j] = s;
        }
    }
    return c;
}
"""

ext = load_inline(name="kforge_contract_tril_wrong", cpp_sources=source, functions=["tril_matmul"],
                  extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return ext.tril_matmul(A.contiguous(), B.contiguous())
