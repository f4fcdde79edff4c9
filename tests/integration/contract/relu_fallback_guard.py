# kforge-problem: ../../../problems/level1/relu.py
# kforge-expect: ok
# Honest, under --policy strict too: the build is guarded and forward keeps a PyTorch fallback
# (a method) for when it fails, as CUDA-L1's published kernels do. The extension built, so the
# fallback never runs: what runs decides, not the torch.relu in its source (issue 28).
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
        self.use_kernel = relu_ext is not None

    def forward(self, x):
        if self.use_kernel:
            return relu_ext.relu_forward(x.contiguous())
        else:
            return self._fallback(x)

    def _fallback(self, x):
        return torch.relu(x)
