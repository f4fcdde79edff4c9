# kforge-problem: level3/resnet_block.py
# kforge-expect: ok
# Honest CUDA candidate: two tiled direct-conv launches; ReLU, residual add and final ReLU fused into epilogues.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

resnet_cpp_source = "torch::Tensor resnet_block_forward(torch::Tensor x, torch::Tensor w1, torch::Tensor b1, torch::Tensor w2, torch::Tensor b2);"

resnet_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// Direct "same" convolution (odd square kernel, stride 1, zero padding KS/2). A 16x16 block
// computes a 16x16 output tile for OCB output channels; per input channel it stages the input
// tile (with halo) and the OCB filters in shared memory.
// Epilogue: v = acc + bias[o] (+ residual); optional ReLU; v = v * scale (+ shift[o]).
#define TILE 16
#define OCB 8

__global__ void __launch_bounds__(256) conv2d_same_kernel(
    const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
    const float* __restrict__ residual, const float* __restrict__ shift, float* __restrict__ y,
    int C, int O, int H, int W, int KS, int tiles_w, int relu, float scale) {
    extern __shared__ float smem[];
    const int IT = TILE + KS - 1;
    const int KK = KS * KS;
    float* s_in = smem;
    float* s_w = smem + IT * IT;
    const int n = blockIdx.z;
    const int o0 = blockIdx.y * OCB;
    const int th0 = (blockIdx.x / tiles_w) * TILE, tw0 = (blockIdx.x % tiles_w) * TILE;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TILE + tx;
    const int pad = KS / 2;
    float acc[OCB];
#pragma unroll
    for (int i = 0; i < OCB; ++i) acc[i] = 0.0f;
    for (int c = 0; c < C; ++c) {
        const float* xp = x + ((long long)n * C + c) * H * W;
        for (int i = tid; i < IT * IT; i += TILE * TILE) {
            const int ih = th0 - pad + i / IT, iw = tw0 - pad + i % IT;
            s_in[i] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xp[(long long)ih * W + iw] : 0.0f;
        }
        for (int i = tid; i < OCB * KK; i += TILE * TILE) {
            const int oo = i / KK, kk = i % KK;
            s_w[i] = (o0 + oo < O) ? w[((long long)(o0 + oo) * C + c) * KK + kk] : 0.0f;
        }
        __syncthreads();
        for (int kh = 0; kh < KS; ++kh) {
            for (int kw = 0; kw < KS; ++kw) {
                const float v = s_in[(ty + kh) * IT + tx + kw];
#pragma unroll
                for (int oo = 0; oo < OCB; ++oo) acc[oo] = fmaf(v, s_w[oo * KK + kh * KS + kw], acc[oo]);
            }
        }
        __syncthreads();
    }
    const int h = th0 + ty, wc = tw0 + tx;
    if (h >= H || wc >= W) return;
#pragma unroll
    for (int oo = 0; oo < OCB; ++oo) {
        const int o = o0 + oo;
        if (o >= O) break;
        const long long idx = (((long long)n * O + o) * H + h) * W + wc;
        float v = acc[oo] + bias[o];
        if (residual != nullptr) v += residual[idx];
        if (relu) v = v > 0.0f ? v : 0.0f;
        v *= scale;
        if (shift != nullptr) v += shift[o];
        y[idx] = v;
    }
}

static void check_cuda_f32(const torch::Tensor& t, const char* what) {
    TORCH_CHECK(t.is_cuda(), what, " must be a CUDA tensor");
    TORCH_CHECK(t.scalar_type() == torch::kFloat, what, " must be float32");
    TORCH_CHECK(t.is_contiguous(), what, " must be contiguous");
}

static torch::Tensor conv2d_same(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                                 const float* residual, const float* shift, bool relu, float scale) {
    check_cuda_f32(x, "x");
    check_cuda_f32(w, "weight");
    check_cuda_f32(b, "bias");
    TORCH_CHECK(x.dim() == 4 && w.dim() == 4 && w.size(1) == x.size(1), "shape mismatch");
    TORCH_CHECK(w.size(2) == w.size(3) && w.size(2) % 2 == 1 && w.size(2) <= 7, "odd square kernel <= 7 expected");
    const int N = (int)x.size(0), C = (int)x.size(1), H = (int)x.size(2), W = (int)x.size(3);
    const int O = (int)w.size(0), KS = (int)w.size(2);
    TORCH_CHECK(b.numel() == O, "bias size mismatch");
    auto y = torch::empty({N, O, H, W}, x.options());
    if (y.numel() == 0) return y;
    const int tiles_w = (W + TILE - 1) / TILE, tiles_h = (H + TILE - 1) / TILE;
    const int IT = TILE + KS - 1;
    const size_t smem = (size_t)(IT * IT + OCB * KS * KS) * sizeof(float);
    dim3 grid(tiles_w * tiles_h, (O + OCB - 1) / OCB, N);
    dim3 block(TILE, TILE);
    conv2d_same_kernel<<<grid, block, smem, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), residual, shift, y.data_ptr<float>(),
        C, O, H, W, KS, tiles_w, relu ? 1 : 0, scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor resnet_block_forward(torch::Tensor x, torch::Tensor w1, torch::Tensor b1,
                                   torch::Tensor w2, torch::Tensor b2) {
    check_cuda_f32(x, "x");
    TORCH_CHECK(w1.size(0) == x.size(1) && w2.size(0) == x.size(1), "identity residual needs C_out == C_in");
    auto mid = conv2d_same(x, w1, b1, nullptr, nullptr, true, 1.0f);
    return conv2d_same(mid, w2, b2, x.data_ptr<float>(), nullptr, true, 1.0f);
}
"""

resnet_ext = load_inline(
    name="kforge_cuda_resnet_block",
    cpp_sources=resnet_cpp_source,
    cuda_sources=resnet_cuda_source,
    functions=["resnet_block_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return resnet_ext.resnet_block_forward(
            x.contiguous(), self.conv1.weight, self.conv1.bias, self.conv2.weight, self.conv2.bias
        )
