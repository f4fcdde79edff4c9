# kforge-problem: level2/layernorm_gelu_residual.py
# kforge-expect: ok
# Honest CUDA candidate: x + gelu_tanh(layernorm(x)) in one kernel, one block per row.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ln_gelu_res_cpp_source = "torch::Tensor ln_gelu_residual_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

ln_gelu_res_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ float block_sum(float v, float* scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float r = lane < nwarps ? scratch[lane] : 0.0f;
    r = warp_sum(r);
    __syncthreads();
    return r;
}

__global__ void ln_gelu_residual_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                        const float* __restrict__ b, float* __restrict__ y,
                                        int64_t cols, float eps) {
    __shared__ float scratch[32];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
    const float mean = block_sum(s, scratch) / (float)cols;
    float v = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float d = xr[c] - mean;
        v += d * d;
    }
    const float rstd = rsqrtf(block_sum(v, scratch) / (float)cols + eps);
    const float k0 = 0.7978845608028654f;  // sqrt(2/pi)
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float xv = xr[c];
        const float h = (xv - mean) * rstd * w[c] + b[c];
        const float g = 0.5f * h * (1.0f + tanhf(k0 * (h + 0.044715f * h * h * h)));
        yr[c] = xv + g;
    }
}

torch::Tensor ln_gelu_residual_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat && x.is_contiguous(), "x must be contiguous float32");
    const int64_t cols = x.size(-1);
    TORCH_CHECK(weight.numel() == cols && bias.numel() == cols, "weight/bias size mismatch");
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    const int64_t rows = x.numel() / cols;
    ln_gelu_residual_kernel<<<(unsigned)rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(),
        cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ln_gelu_res_ext = load_inline(
    name="kforge_cuda_layernorm_gelu_residual",
    cpp_sources=ln_gelu_res_cpp_source,
    cuda_sources=ln_gelu_res_cuda_source,
    functions=["ln_gelu_residual_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return ln_gelu_res_ext.ln_gelu_residual_forward(
            x.contiguous(), self.norm.weight, self.norm.bias, self.norm.eps
        )
