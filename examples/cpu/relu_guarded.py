# kforge-problem: level1/relu.py
# kforge-expect: ok
# Honest CPU ReLU wrapped in guards that never fire: try/except around the build and the call.
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
except Exception as e:
    relu_ext = None
    build_error = str(e)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if relu_ext is None:
            raise RuntimeError("the ReLU kernel did not build: " + build_error)
        try:
            return relu_ext.relu_forward(x.contiguous())
        except RuntimeError as e:
            raise RuntimeError("the ReLU kernel failed on shape %s" % (tuple(x.shape),)) from e
