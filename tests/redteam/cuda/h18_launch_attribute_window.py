# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H18
# cudaLaunchKernelEx with a persisting access-policy launch attribute and a raised persisting limit
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l2_cpp_source = r"""
torch::Tensor relu_stream_window(torch::Tensor x);
torch::Tensor relu_launch_window(torch::Tensor x);
"""

l2_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

static void persist_limit() {
    int dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, dev);
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, p.persistingL2CacheMaxSize);
}

// Stream attribute: every later kernel on this stream keeps x in L2, through the flush.
torch::Tensor relu_stream_window(torch::Tensor x) {
    persist_limit();
    cudaStream_t s = at::cuda::getCurrentCUDAStream();
    cudaStreamAttrValue attr = {};
    attr.accessPolicyWindow.base_ptr = x.data_ptr();
    attr.accessPolicyWindow.num_bytes = x.numel() * sizeof(float);
    attr.accessPolicyWindow.hitRatio = 1.0f;
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &attr);
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256, 0, s>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}

// Launch attribute on the kernel itself (cudaLaunchKernelEx), no stream state left behind.
torch::Tensor relu_launch_window(torch::Tensor x) {
    persist_limit();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeAccessPolicyWindow;
    a[0].val.accessPolicyWindow.base_ptr = x.data_ptr();
    a[0].val.accessPolicyWindow.num_bytes = n * sizeof(float);
    a[0].val.accessPolicyWindow.hitRatio = 1.0f;
    a[0].val.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    a[0].val.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)((n + 255) / 256));
    cfg.blockDim = dim3(256);
    cfg.stream = at::cuda::getCurrentCUDAStream();
    cfg.attrs = a;
    cfg.numAttrs = 1;
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    cudaLaunchKernelEx(&cfg, relu_kernel, xp, yp, n);
    return y;
}
"""

l2_ext = load_inline(
    name="kforge_rt_cuda_l2",
    cpp_sources=l2_cpp_source,
    cuda_sources=l2_cuda_source,
    functions=["relu_stream_window", "relu_launch_window"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return l2_ext.relu_launch_window(x)
