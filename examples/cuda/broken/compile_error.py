# kforge-problem: level1/relu.py
# kforge-expect: compile_error
# Broken CUDA candidate: passes torch::Tensor objects to a kernel that takes float pointers.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_cpp_source = "torch::Tensor relu_forward(torch::Tensor x);"

relu_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = (int)((n + threads - 1) / threads);
    relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(x, y, n);
    return y;
}
"""

relu_ext = load_inline(
    name="kforge_cuda_broken_compile_error",
    cpp_sources=relu_cpp_source,
    cuda_sources=relu_cuda_source,
    functions=["relu_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return relu_ext.relu_forward(x.contiguous())
