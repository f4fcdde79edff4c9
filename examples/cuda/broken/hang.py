# kforge-problem: level1/relu.py
# kforge-expect: timeout
# Broken CUDA candidate: every thread spins on a ready flag that no one ever sets.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_cpp_source = "torch::Tensor relu_forward(torch::Tensor x);"

relu_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// Meant to be raised by a "producer" block once the input is staged; nothing ever writes it.
__device__ volatile int g_ready = 0;

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    while (g_ready == 0) {
    }
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat, "bad x");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = (int)((n + threads - 1) / threads);
    relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

relu_ext = load_inline(
    name="kforge_cuda_broken_hang",
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
