# kforge-problem: level1/relu.py
# kforge-expect: timeout
# Broken CPU candidate: waits for worker "chunks" that are never started, so it spins forever.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat, "contiguous float32 expected");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    const int64_t chunk = 4096;
    const int64_t num_chunks = (n + chunk - 1) / chunk;
    volatile int64_t done_chunks = 0;
    // Intended: workers process chunks and bump done_chunks. No worker exists, so this never ends.
    while (done_chunks < num_chunks) {
    }
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return y;
}
"""

relu_ext = load_inline(
    name="kforge_cpu_broken_hang",
    cpp_sources=relu_source,
    functions=["relu_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return relu_ext.relu_forward(x.contiguous())
