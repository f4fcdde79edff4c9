# Same extension name as same_name_relu.py, different (wrong: leaky) code. Builds are keyed by
# content, so this must load its own extension and be found incorrect.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
torch::Tensor forward(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0, n = xc.numel(); i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.5f * in[i];
    return y;
}
"""

ext = load_inline(name="elementwise_add", cpp_sources=source, functions=["forward"],
                  extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.forward(x)
