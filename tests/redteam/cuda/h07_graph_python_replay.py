# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H07
# honest use of torch.cuda.CUDAGraph in forward: the extension's kernel captured once per shape on static buffers, each call copies its input in, replays and clones the output; still H07 under kernelbench, where only graphs the kernel sources launch are allowed (a Python replay is outside the H02 ablation, and torch.cuda.graph makes torch's own side stream current in its block)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_cpp_source = "torch::Tensor relu_forward(torch::Tensor x);"

relu_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.is_contiguous(), "bad x");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

relu_ext = load_inline(
    name="kforge_rt_cuda_relu",
    cpp_sources=relu_cpp_source,
    cuda_sources=relu_cuda_source,
    functions=["relu_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.graphs = {}

    def forward(self, x):
        key = tuple(x.shape)
        if key not in self.graphs:
            static_x = torch.empty_like(x)
            static_x.copy_(x)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_y = relu_ext.relu_forward(static_x)
            self.graphs[key] = (graph, static_x, static_y)
        graph, static_x, static_y = self.graphs[key]
        static_x.copy_(x)
        graph.replay()
        return static_y.clone()
