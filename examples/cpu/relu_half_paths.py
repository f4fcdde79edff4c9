# kforge-problem: level1/relu.py
# kforge-expect: ok
# Honest CPU ReLU with a c10::Half path for half tensors; an fp32 problem only takes the float one.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>
#include <c10/util/Half.h>

template <typename T>
static void relu_loop(const T* in, T* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(in[i]);  // compute in float for every type
        out[i] = static_cast<T>(v > 0.0f ? v : 0.0f);
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu(), "x must be a CPU tensor");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    auto y = torch::empty_like(x);
    if (x.scalar_type() == at::kHalf) {
        relu_loop<c10::Half>(x.data_ptr<c10::Half>(), y.data_ptr<c10::Half>(), x.numel());
    } else {
        TORCH_CHECK(x.scalar_type() == torch::kFloat, "x must be float32 or float16");
        relu_loop<float>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    }
    return y;
}
"""

relu_ext = load_inline(
    name="kforge_cpu_relu_half_paths",
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
