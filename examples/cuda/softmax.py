# kforge-problem: level1/softmax.py
# kforge-expect: ok
# Honest CUDA candidate: one block per row, warp-shuffle max and sum reductions.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_cpp_source = "torch::Tensor softmax_forward(torch::Tensor x);"

softmax_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cfloat>

__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Reduces v over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
template <bool IS_MAX>
__device__ float block_reduce(float v, float* scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    v = IS_MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float r = lane < nwarps ? scratch[lane] : (IS_MAX ? -FLT_MAX : 0.0f);
    r = IS_MAX ? warp_max(r) : warp_sum(r);
    __syncthreads();  // scratch may be reused by the next reduction
    return r;
}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float scratch[32];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    float m = -FLT_MAX;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_reduce<true>(m, scratch);
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float e = expf(xr[c] - m);
        yr[c] = e;
        s += e;
    }
    s = block_reduce<false>(s, scratch);
    const float inv = 1.0f / s;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] *= inv;
}

torch::Tensor softmax_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "x must be a CUDA float32 tensor");
    TORCH_CHECK(x.is_contiguous() && x.dim() >= 1, "x must be contiguous");
    auto y = torch::empty_like(x);
    const int64_t cols = x.size(-1);
    if (x.numel() == 0) return y;
    const int64_t rows = x.numel() / cols;
    TORCH_CHECK(rows < (1LL << 31), "too many rows");
    const int threads = cols >= 1024 ? 512 : (cols >= 256 ? 256 : 128);
    softmax_kernel<<<(unsigned)rows, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

softmax_ext = load_inline(
    name="kforge_cuda_softmax",
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
