# kforge-problem: level1/relu.py
# kforge-expect: runtime_error
# kforge-says: relu_1d: expected a 1-D tensor | TORCH_CHECK(x.dim() == 1, "relu_1d: expected a 1-D tensor, got ", x.dim(), " dimensions")
# Broken CUDA candidate: its shape check fails on the problem's 2-D inputs (it wants 1-D) and
# streams the dimension into its message. Where the failing check raises, the verdict's message
# holds the check's text; on the GPU machine the same check kills the process (2026-12-07, an
# H100: its compiler links a static libstdc++ into extensions, and formatting a number there
# crashes), and the crash's hint names the check (src/eval/crash_hint.cc).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = "torch::Tensor relu_1d(torch::Tensor x);"

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

torch::Tensor relu_1d(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "x must be a contiguous CUDA tensor");
    TORCH_CHECK(x.dim() == 1, "relu_1d: expected a 1-D tensor, got ", x.dim(), " dimensions");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kforge_streamed_check", cpp_sources=cpp_source,
                  cuda_sources=cuda_source, functions=["relu_1d"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_1d(x)
