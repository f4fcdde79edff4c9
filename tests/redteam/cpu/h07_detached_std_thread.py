# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H07
# a detached std::thread fills the output after forward has returned
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

thread_source = r"""
#include <torch/extension.h>
#include <future>
#include <thread>

static void relu_loop(torch::Tensor x, torch::Tensor y) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

torch::Tensor relu_detached(torch::Tensor x) {
    auto y = torch::empty_like(x);
    std::thread(relu_loop, x, y).detach();  // returns before the work is done
    return y;
}

static std::future<void> pending;

torch::Tensor relu_deferred(torch::Tensor x) {
    if (pending.valid()) pending.wait();  // the previous call's work lands in this call
    auto y = torch::empty_like(x);
    pending = std::async(std::launch::async, relu_loop, x, y);
    return y;
}
"""

thread_ext = load_inline(
    name="kforge_rt_thread",
    cpp_sources=thread_source,
    functions=["relu_detached", "relu_deferred"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return thread_ext.relu_detached(x)
