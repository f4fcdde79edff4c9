# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H07
# kforge-expect-kernelbench: ok
# kforge-rule-kernelbench: H07_graph
# honest: a CUDA graph the extension builds once per shape on buffers of its own; each call copies its input in, launches the graph and copies the output out, all on the current stream (strict bans graphs; kernelbench judges what runs)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

graph_cpp_source = "torch::Tensor relu_graph(torch::Tensor x);"

graph_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <map>
#include <vector>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

// The graph's one kernel node always reads `in` and writes `out`, buffers it owns; the call
// copies its own input in first, so the graph computes from this call's input.
struct ShapeGraph {
    torch::Tensor in, out;
    float* in_ptr = nullptr;
    float* out_ptr = nullptr;
    int64_t n = 0;
    cudaGraphExec_t exec = nullptr;
};

static ShapeGraph& graph_for(const torch::Tensor& x) {
    // Never destroyed: CUDA may be gone by the time static destructors run.
    static auto* graphs = new std::map<std::vector<int64_t>, ShapeGraph>();
    ShapeGraph& g = (*graphs)[x.sizes().vec()];
    if (g.exec != nullptr) return g;
    g.in = torch::empty_like(x);
    g.out = torch::empty_like(x);
    g.in_ptr = g.in.data_ptr<float>();
    g.out_ptr = g.out.data_ptr<float>();
    g.n = x.numel();
    // The node's arguments are copied when the node is added.
    void* args[] = {&g.in_ptr, &g.out_ptr, &g.n};
    cudaKernelNodeParams params = {};
    params.func = reinterpret_cast<void*>(relu_kernel);
    params.gridDim = dim3(static_cast<unsigned int>((g.n + 255) / 256));
    params.blockDim = dim3(256);
    params.sharedMemBytes = 0;
    params.kernelParams = args;
    params.extra = nullptr;
    cudaGraph_t graph;
    C10_CUDA_CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphNode_t node;
    C10_CUDA_CHECK(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &params));
    C10_CUDA_CHECK(cudaGraphInstantiateWithFlags(&g.exec, graph, 0));
    C10_CUDA_CHECK(cudaGraphDestroy(graph));
    return g;
}

torch::Tensor relu_graph(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.is_contiguous(), "bad x");
    const c10::cuda::CUDAGuard guard(x.device());
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    ShapeGraph& g = graph_for(x);
    const size_t bytes = static_cast<size_t>(g.n) * sizeof(float);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    C10_CUDA_CHECK(cudaMemcpyAsync(g.in_ptr, x.data_ptr<float>(), bytes,
                                   cudaMemcpyDeviceToDevice, stream));
    C10_CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
    C10_CUDA_CHECK(cudaMemcpyAsync(y.data_ptr<float>(), g.out_ptr, bytes,
                                   cudaMemcpyDeviceToDevice, stream));
    return y;
}
"""

graph_ext = load_inline(
    name="kforge_rt_cuda_graph_ext",
    cpp_sources=graph_cpp_source,
    cuda_sources=graph_cuda_source,
    functions=["relu_graph"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return graph_ext.relu_graph(x.contiguous())
