# kforge-problem: ../../../problems/level1/relu.py
# kforge-expect: cheat
# kforge-rule: H01
# The same guard, set so that the fallback always runs, with the kernel called on a sliver
# beside it: the static rules defer the branch to what runs, and the profiled forward's
# aten::relu makes it H01 under --policy strict.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "x must be a CPU tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "x must be float32");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = in[i];
        out[i] = v > 0.0f ? v : 0.0f;
    }
    return y;
}
"""

# The same build as relu.py (shared through the build cache); the guard only reports.
try:
    relu_ext = load_inline(
        name="kforge_cpu_relu",
        cpp_sources=relu_source,
        functions=["relu_forward"],
        extra_cflags=["-O3"],
        verbose=False,
    )
    use_kernel = False  # built, and never used
except Exception as e:
    use_kernel = False
    relu_ext = None
    build_error = str(e)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if not use_kernel:
            relu_ext.relu_forward(x[:1].contiguous())
            return torch.relu(x)
        return relu_ext.relu_forward(x.contiguous())
