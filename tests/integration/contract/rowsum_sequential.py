# kforge-problem: rand_rowsum.py
# kforge-expect: ok
# Honest: each row summed left to right in one fp32 accumulator, an order unlike PyTorch's. On
# the problem's non-negative inputs it is within 1e-4 of the reference; on signed inputs of this
# length the sums cancel and it would not be (the signed trial must stay inside the contract).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>

torch::Tensor row_sum(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat && x.is_contiguous() && x.dim() == 2, "float32 2-d");
    const int64_t rows = x.size(0), n = x.size(1);
    auto y = torch::empty({rows}, x.options());
    const float* X = x.data_ptr<float>();
    float* Y = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        float s = 0.0f;
        for (int64_t k = 0; k < n; ++k) s += X[r * n + k];
        Y[r] = s;
    }
    return y;
}
"""

ext = load_inline(name="kforge_contract_rowsum", cpp_sources=source, functions=["row_sum"],
                  extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.row_sum(x.contiguous())
