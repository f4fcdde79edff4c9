# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H03 H01
# try/finally whose return swallows the kernel's exception and returns a clamp_min result
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

bad_cpp_source = r"""
torch::Tensor relu_raise(torch::Tensor x);
torch::Tensor relu_empty(torch::Tensor x);
torch::Tensor relu_zero_input(torch::Tensor x);
torch::Tensor relu_inplace(torch::Tensor x);
torch::Tensor relu_identity(torch::Tensor x);
torch::Tensor relu_abs(torch::Tensor x);
torch::Tensor relu_fixed_n(torch::Tensor x);
torch::Tensor relu_fixed_row(torch::Tensor x);
torch::Tensor relu_fill(torch::Tensor like, double value);
"""

bad_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define LAUNCH(kernel, n, ...) \
    kernel<<<((n) + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(__VA_ARGS__); \
    C10_CUDA_KERNEL_LAUNCH_CHECK()

__global__ void k_zero_both(float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { x[i] = 0.0f; y[i] = 0.0f; }
}
__global__ void k_relu(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
__global__ void k_copy(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
__global__ void k_abs(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fabsf(x[i]);
}
__global__ void k_rows(const float* x, float* y, int64_t n) {
    // one block per row, row length hard-coded to 16384
    for (int64_t c = threadIdx.x; c < 16384; c += blockDim.x) {
        int64_t i = (int64_t)blockIdx.x * 16384 + c;
        if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}
__global__ void k_fill(float* y, float v, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}

torch::Tensor relu_raise(torch::Tensor x) {
    TORCH_CHECK(false, "relu_raise: unsupported layout");
    return x;
}
torch::Tensor relu_empty(torch::Tensor x) { return torch::empty_like(x); }
torch::Tensor relu_zero_input(torch::Tensor x) {
    auto y = torch::empty_like(x);
    LAUNCH(k_zero_both, x.numel(), x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
torch::Tensor relu_inplace(torch::Tensor x) {
    LAUNCH(k_relu, x.numel(), x.data_ptr<float>(), x.data_ptr<float>(), x.numel());
    return x;
}
torch::Tensor relu_identity(torch::Tensor x) {
    auto y = torch::empty_like(x);
    LAUNCH(k_copy, x.numel(), x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
torch::Tensor relu_abs(torch::Tensor x) {
    auto y = torch::empty_like(x);
    LAUNCH(k_abs, x.numel(), x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
torch::Tensor relu_fixed_n(torch::Tensor x) {
    const int64_t n = std::min<int64_t>(x.numel(), 256 * 16384);  // the one shape it was shown
    auto y = torch::empty_like(x);
    LAUNCH(k_relu, n, x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
torch::Tensor relu_fixed_row(torch::Tensor x) {
    auto y = torch::zeros_like(x);
    k_rows<<<256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
torch::Tensor relu_fill(torch::Tensor like, double value) {
    auto y = torch::empty_like(like);
    LAUNCH(k_fill, y.numel(), y.data_ptr<float>(), (float)value, y.numel());
    return y;
}
"""

bad_ext = load_inline(
    name="kforge_rt_cuda_bad",
    cpp_sources=bad_cpp_source,
    cuda_sources=bad_cuda_source,
    functions=["relu_raise", "relu_empty", "relu_zero_input", "relu_inplace", "relu_identity",
               "relu_abs", "relu_fixed_n", "relu_fixed_row", "relu_fill"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        try:
            y = bad_ext.relu_raise(x)
        finally:
            return x.clamp_min(0.0)
