# kforge-problem: level1/relu.py
# kforge-expect: incorrect
# kforge-rule: H13
# the CUDA kernel converts each value to __half and back (conversions are no static proof since
# 2026-12-01: the fp32 tolerance catches it, as it does the CPU twin h13_cxx_half)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

half_cpp_source = r"""
torch::Tensor relu_via_half(torch::Tensor x);
torch::Tensor relu_half_io(torch::Tensor x);
"""

half_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_fp16.h>

__global__ void relu_via_half_kernel(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half h = __float2half(x[i]);
        h = __hgt(h, __float2half(0.0f)) ? h : __float2half(0.0f);
        y[i] = __half2float(h);
    }
}

__global__ void relu_half_kernel(const __half* x, __half* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hgt(x[i], __float2half(0.0f)) ? x[i] : __float2half(0.0f);
}

torch::Tensor relu_via_half(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    relu_via_half_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}

torch::Tensor relu_half_io(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kHalf, "half in");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    relu_half_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const __half*>(x.data_ptr<at::Half>()),
        reinterpret_cast<__half*>(y.data_ptr<at::Half>()), n);
    return y;
}
"""

half_ext = load_inline(
    name="kforge_rt_cuda_half",
    cpp_sources=half_cpp_source,
    cuda_sources=half_cuda_source,
    functions=["relu_via_half", "relu_half_io"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return half_ext.relu_via_half(x)
