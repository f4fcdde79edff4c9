# kforge-problem: whole_parity.py
# kforge-expect: ok
# Honest: the parity through an integer conversion, right for the whole values the problem
# produces. Wrong for fractions, which the problem never produces: timed calls' fresh inputs
# must keep the values whole.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>

torch::Tensor whole_parity(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat && x.is_contiguous(), "contiguous float32");
    auto y = torch::empty_like(x);
    const float* X = x.data_ptr<float>();
    float* Y = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) Y[i] = static_cast<float>(static_cast<int64_t>(X[i]) & 1);
    return y;
}
"""

ext = load_inline(name="kforge_contract_parity", cpp_sources=source, functions=["whole_parity"],
                  extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.whole_parity(x.contiguous())
