# kforge-problem: sym_matmul.py
# kforge-expect: ok
# Honest: reads A by columns (A[k][i] for A[i][k]: the same value for a symmetric A), so both
# operands are walked along rows. Wrong for an A that is not symmetric, which the problem never
# produces: every trial and every timed call's fresh inputs must stay symmetric.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>

torch::Tensor sym_matmul(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.scalar_type() == torch::kFloat && b.scalar_type() == torch::kFloat, "float32");
    TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && a.dim() == 2, "contiguous 2-d");
    const int64_t n = a.size(0);
    auto c = torch::zeros({n, n}, a.options());
    const float* A = a.data_ptr<float>();
    const float* B = b.data_ptr<float>();
    float* C = c.data_ptr<float>();
    for (int64_t k = 0; k < n; ++k) {
        for (int64_t i = 0; i < n; ++i) {
            const float aik = A[k * n + i];  // A[i][k], as A is symmetric
            for (int64_t j = 0; j < n; ++j) C[i * n + j] += aik * B[k * n + j];
        }
    }
    return c;
}
"""

ext = load_inline(name="kforge_contract_sym", cpp_sources=source, functions=["sym_matmul"],
                  extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return ext.sym_matmul(A.contiguous(), B.contiguous())
