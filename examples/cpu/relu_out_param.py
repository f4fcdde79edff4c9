# kforge-problem: level1/relu.py
# kforge-expect: ok
# Honest CPU candidate in the out-parameter style many model-written kernels use: the extension's
# function returns nothing and writes its answer into a tensor forward allocated. kforge's
# ablation must make such a function a no-op (skip it), not poison a result it never returns.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>

void relu_into(torch::Tensor x, torch::Tensor out) {
    TORCH_CHECK(x.device().is_cpu() && out.device().is_cpu(), "CPU tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat && x.is_contiguous(), "float32 contiguous x");
    TORCH_CHECK(out.sizes() == x.sizes() && out.is_contiguous(), "out shaped like x");
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) o[i] = in[i] > 0.0f ? in[i] : 0.0f;
}
"""

relu_ext = load_inline(
    name="kforge_cpu_relu_out",
    cpp_sources=relu_source,
    functions=["relu_into"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        out = torch.empty_like(x)
        relu_ext.relu_into(x.contiguous(), out)
        return out
