# kforge-problem: level1/softmax.py
# kforge-expect: incorrect
# Broken CUDA candidate: softmax that normalises by its own warp's partial sum, not the row's sum.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_cpp_source = "torch::Tensor softmax_forward(torch::Tensor x);"

softmax_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cfloat>

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float warp_max[32];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    float m = -FLT_MAX;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (lane == 0) warp_max[warp] = m;
    __syncthreads();
    m = -FLT_MAX;
    for (int w = 0; w < nwarps; ++w) m = fmaxf(m, warp_max[w]);
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    // Bug: s is only this warp's share of the row sum; the per-warp sums are never combined.
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) / s;
}

torch::Tensor softmax_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat, "bad x");
    auto y = torch::empty_like(x);
    const int64_t cols = x.size(-1);
    const int64_t rows = x.numel() / cols;
    softmax_kernel<<<(unsigned)rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

softmax_ext = load_inline(
    name="kforge_cuda_broken_wrong",
    cpp_sources=softmax_cpp_source,
    cuda_sources=softmax_cuda_source,
    functions=["softmax_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_ext.softmax_forward(x.contiguous())
