# kforge-problem: level1/relu.py
# kforge-expect: incorrect
# kforge-rule: H13
# the C++ kernel rounds every value through c10::Half (a half type alone is no static proof: the fp32 tolerance catches it)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

half_source = r"""
#include <torch/extension.h>
#include <c10/util/Half.h>

torch::Tensor relu_forward(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
        const c10::Half h = in[i];  // fp32 -> fp16 -> fp32
        const float v = static_cast<float>(h);
        out[i] = v > 0.0f ? v : 0.0f;
    }
    return y;
}
"""

half_ext = load_inline(
    name="kforge_rt_half",
    cpp_sources=half_source,
    functions=["relu_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return half_ext.relu_forward(x)
