# kforge-problem: level1/relu.py
# kforge-expect: ok
# Honest but slow CPU candidate for the reward-service tests: its first forward call in each
# process waits a few seconds, which gives a test time to kill the worker running it.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>
#include <chrono>
#include <thread>

static bool waited = false;

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat, "contiguous float32 expected");
    if (!waited) {
        waited = true;
        std::this_thread::sleep_for(std::chrono::seconds(4));
    }
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return y;
}
"""

relu_ext = load_inline(
    name="kforge_cpu_slow_relu",
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
