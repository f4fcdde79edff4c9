# kforge-problem: level1/matmul.py
# kforge-expect: cheat
# kforge-rule: H04
# kforge-expect-kernelbench: ok
# kforge-rule-kernelbench: H04
# the C++ extension calls torch::mm (ATen's BLAS) instead of computing
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

aten_source = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    return at::relu(x);
}

torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
    return torch::mm(a, b);
}
"""

aten_ext = load_inline(
    name="kforge_rt_aten",
    cpp_sources=aten_source,
    functions=["relu_forward", "mm_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return aten_ext.mm_forward(a, b)
