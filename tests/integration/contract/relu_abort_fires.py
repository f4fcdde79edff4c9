# kforge-problem: ../../../problems/level1/relu.py
# kforge-expect: runtime_error
# The error check fires on every call (a wrong condition): the process aborts during the
# call, which is runtime_error, not cheat.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <cstdio>
#include <cstdlib>

static void check(bool ok, const char* what) {
    if (!ok) {
        printf("relu: %s\n", what);
        abort();
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    check(x.scalar_type() == torch::kFloat, "float32 expected");
    check(x.numel() < 0, "always fails");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return y;
}
"""

ext = load_inline(name="kforge_contract_relu_abort_fires", cpp_sources=source,
                  functions=["relu_forward"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_forward(x.contiguous())
