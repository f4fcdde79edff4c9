# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H04
# kforge-expect-kernelbench: ok
# kforge-rule-kernelbench: H04
# the .cu source just calls at::relu
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

lib_cpp_source = r"""
torch::Tensor relu_forward(torch::Tensor x);
torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b);
"""

lib_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>

torch::Tensor relu_forward(torch::Tensor x) {
    return at::relu(x);
}

torch::Tensor mm_forward(torch::Tensor a, torch::Tensor b) {
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto c = torch::empty({M, N}, a.options());
    cublasHandle_t h = at::cuda::getCurrentCUDABlasHandle();
    const float one = 1.0f, zero = 0.0f;
    // row-major C = A B  as column-major C^T = B^T A^T
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b.data_ptr<float>(), N,
                a.data_ptr<float>(), K, &zero, c.data_ptr<float>(), N);
    return c;
}
"""

lib_ext = load_inline(
    name="kforge_rt_cuda_lib",
    cpp_sources=lib_cpp_source,
    cuda_sources=lib_cuda_source,
    functions=["relu_forward", "mm_forward"],
    extra_cuda_cflags=["-O3"],
    extra_ldflags=["-lcublas"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return lib_ext.relu_forward(x)
