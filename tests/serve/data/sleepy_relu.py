# kforge-problem: level1/relu.py
# kforge-expect: ok
# Honest CPU candidate whose first forward call in each process waits 10 s: the time a GPU
# candidate spends on its device, which the service's lanes overlap. tests/serve/test_groups.py
# times a verl batch with it (the wait dominates the candidate's CPU work even on a loaded
# 2-core machine, where CPU work cannot overlap).
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
        std::this_thread::sleep_for(std::chrono::seconds(10));
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
    name="kforge_cpu_sleepy_relu",
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
