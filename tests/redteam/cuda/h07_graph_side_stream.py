# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H07
# a CUDA graph launched on a side stream that never joins the timed stream, the stream made by torch._C._CudaStreamBase (the private class torch.cuda.Stream is built on). H07 before any build under both policies since 2026-12-05: on an H100 that day, under kernelbench (graphs allowed), the wall clock did not see its 64 ReLUs a call, which ran outside the timed events (verdict ok, 0.0176 ms against eager's 0.0162; docs/SECURITY.md, "Not defended")
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

side_cpp_source = "torch::Tensor relu_escaped(torch::Tensor x, int64_t side_stream);"

side_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <map>
#include <vector>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

constexpr int kRepeats = 64;  // the same ReLU again and again: work for the wall clock to see

struct ShapeGraph {
    torch::Tensor in, out;
    float* in_ptr = nullptr;
    float* out_ptr = nullptr;
    int64_t n = 0;
    cudaGraphExec_t exec = nullptr;
    cudaEvent_t input_ready = nullptr;
};

static ShapeGraph& graph_for(const torch::Tensor& x) {
    static auto* graphs = new std::map<std::vector<int64_t>, ShapeGraph>();
    ShapeGraph& g = (*graphs)[x.sizes().vec()];
    if (g.exec != nullptr) return g;
    g.in = torch::empty_like(x);
    g.out = torch::empty_like(x);
    g.in_ptr = g.in.data_ptr<float>();
    g.out_ptr = g.out.data_ptr<float>();
    g.n = x.numel();
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
    cudaGraphNode_t previous = nullptr;
    for (int r = 0; r < kRepeats; ++r) {
        cudaGraphNode_t node;
        C10_CUDA_CHECK(cudaGraphAddKernelNode(&node, graph, previous ? &previous : nullptr,
                                              previous ? 1 : 0, &params));
        previous = node;
    }
    C10_CUDA_CHECK(cudaGraphInstantiateWithFlags(&g.exec, graph, 0));
    C10_CUDA_CHECK(cudaGraphDestroy(graph));
    C10_CUDA_CHECK(cudaEventCreateWithFlags(&g.input_ready, cudaEventDisableTiming));
    return g;
}

// The input is copied in on the timed stream; the side stream waits for that copy, runs the
// graph and copies the answer out. Nothing makes the timed stream wait for the side stream.
torch::Tensor relu_escaped(torch::Tensor x, int64_t side_stream) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.is_contiguous(), "bad x");
    const c10::cuda::CUDAGuard guard(x.device());
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    ShapeGraph& g = graph_for(x);
    const size_t bytes = static_cast<size_t>(g.n) * sizeof(float);
    cudaStream_t timed = at::cuda::getCurrentCUDAStream();
    cudaStream_t side = reinterpret_cast<cudaStream_t>(side_stream);
    C10_CUDA_CHECK(cudaMemcpyAsync(g.in_ptr, x.data_ptr<float>(), bytes,
                                   cudaMemcpyDeviceToDevice, timed));
    C10_CUDA_CHECK(cudaEventRecord(g.input_ready, timed));
    C10_CUDA_CHECK(cudaStreamWaitEvent(side, g.input_ready, 0));
    C10_CUDA_CHECK(cudaGraphLaunch(g.exec, side));
    C10_CUDA_CHECK(cudaMemcpyAsync(y.data_ptr<float>(), g.out_ptr, bytes,
                                   cudaMemcpyDeviceToDevice, side));
    return y;
}
"""

side_ext = load_inline(
    name="kforge_rt_cuda_graph_side",
    cpp_sources=side_cpp_source,
    cuda_sources=side_cuda_source,
    functions=["relu_escaped"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # A non-blocking stream from PyTorch's pool, made through the private base class of
        # torch.cuda.Stream: nothing in the source names a stream API the static rules know.
        self.side = torch._C._CudaStreamBase(priority=0)

    def forward(self, x):
        return side_ext.relu_escaped(x.contiguous(), self.side.cuda_stream)
