# kforge-problem: level1/relu.py
# kforge-expect: ok
# Honest CUDA ReLU (relu.py's kernel) wrapped in guards that never fire: try/except around the
# build and the call, as CUDA-L1's published kernels guard their builds.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_cpp_source = "torch::Tensor relu_forward(torch::Tensor x);"

relu_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel_vec4(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        v.x = v.x > 0.0f ? v.x : 0.0f;
        v.y = v.y > 0.0f ? v.y : 0.0f;
        v.z = v.z > 0.0f ? v.z : 0.0f;
        v.w = v.w > 0.0f ? v.w : 0.0f;
        y[i] = v;
    }
}

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    const int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "x must be float32");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    int64_t done = 0;
    if ((reinterpret_cast<uintptr_t>(xp) % 16 == 0) && (reinterpret_cast<uintptr_t>(yp) % 16 == 0)) {
        const int64_t n4 = n / 4;
        if (n4 > 0) {
            const int blocks = (int)std::min<int64_t>((n4 + threads - 1) / threads, 8192);
            relu_kernel_vec4<<<blocks, threads, 0, stream>>>(reinterpret_cast<const float4*>(xp),
                                                            reinterpret_cast<float4*>(yp), n4);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
        }
        done = n4 * 4;
    }
    if (done < n) {
        const int blocks = (int)std::min<int64_t>((n - done + threads - 1) / threads, 8192);
        relu_kernel<<<blocks, threads, 0, stream>>>(xp, yp, done, n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

try:
    relu_ext = load_inline(
        name="kforge_cuda_relu",
        cpp_sources=relu_cpp_source,
        cuda_sources=relu_cuda_source,
        functions=["relu_forward"],
        extra_cuda_cflags=["-O3"],
        verbose=False,
    )
except Exception as e:
    relu_ext = None
    build_error = str(e)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        try:
            return relu_ext.relu_forward(x.contiguous())
        except RuntimeError as e:
            raise RuntimeError("the ReLU kernel failed on shape %s" % (tuple(x.shape),)) from e
