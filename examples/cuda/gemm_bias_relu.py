# kforge-problem: level2/gemm_bias_relu.py
# kforge-expect: ok
# Honest CUDA candidate: tiled SGEMM against the Linear weight with bias, ReLU and scale fused into the epilogue.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

gemm_bias_relu_cpp_source = "torch::Tensor gemm_bias_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double scale);"

gemm_bias_relu_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// C[M,N] = epilogue(A[M,K] @ B) per batch (blockIdx.z), with B either [K,N] row-major
// (TRANS_B = false) or a weight W[N,K] used as W^T (TRANS_B = true, like nn.Linear).
// Epilogue: v = acc (+ bias[n]) (+ residual[m,n]); ACT 1 = ReLU, 2 = exact GELU; v *= scale.
#define BM 64
#define BN 64
#define BK 16

template <bool TRANS_B, int ACT>
__global__ void __launch_bounds__(256) sgemm_kernel(
    const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ bias,
    const float* __restrict__ residual, float* __restrict__ C, int M, int N, int K,
    long long strideA, long long strideB, long long strideC, float scale) {
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    A += blockIdx.z * strideA;
    B += blockIdx.z * strideB;
    C += blockIdx.z * strideC;
    if (residual != nullptr) residual += blockIdx.z * strideC;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int e = tid + i * 256;
            const int m = e / BK, k = e % BK;
            const int gm = row0 + m, gk = k0 + k;
            As[k][m] = (gm < M && gk < K) ? A[(long long)gm * K + gk] : 0.0f;
            if (TRANS_B) {
                const int n = e / BK, kk = e % BK;
                const int gn = col0 + n, gkk = k0 + kk;
                Bs[kk][n] = (gn < N && gkk < K) ? B[(long long)gn * K + gkk] : 0.0f;
            } else {
                const int kk = e / BN, n = e % BN;
                const int gn = col0 + n, gkk = k0 + kk;
                Bs[kk][n] = (gn < N && gkk < K) ? B[(long long)gkk * N + gn] : 0.0f;
            }
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[k][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = Bs[k][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int r = row0 + ty + 16 * i;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int c = col0 + tx + 16 * j;
            if (c >= N) continue;
            float v = acc[i][j];
            if (bias != nullptr) v += bias[c];
            if (residual != nullptr) v += residual[(long long)r * N + c];
            if (ACT == 1) v = v > 0.0f ? v : 0.0f;
            if (ACT == 2) v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
            C[(long long)r * N + c] = v * scale;
        }
    }
}

static void check_cuda_f32(const torch::Tensor& t, const char* what) {
    TORCH_CHECK(t.is_cuda(), what, " must be a CUDA tensor");
    TORCH_CHECK(t.scalar_type() == torch::kFloat, what, " must be float32");
    TORCH_CHECK(t.is_contiguous(), what, " must be contiguous");
}

// act: 0 none, 1 ReLU, 2 GELU. bias/residual may be null.
static void launch_sgemm(const float* A, const float* B, const float* bias, const float* residual, float* C,
                         int M, int N, int K, int batch, long long sA, long long sB, long long sC,
                         bool trans_b, int act, float scale) {
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM, batch);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
#define KFORGE_LAUNCH(T, ACTV) sgemm_kernel<T, ACTV><<<grid, 256, 0, stream>>>(A, B, bias, residual, C, M, N, K, sA, sB, sC, scale)
    if (trans_b) {
        if (act == 1) KFORGE_LAUNCH(true, 1); else if (act == 2) KFORGE_LAUNCH(true, 2); else KFORGE_LAUNCH(true, 0);
    } else {
        if (act == 1) KFORGE_LAUNCH(false, 1); else if (act == 2) KFORGE_LAUNCH(false, 2); else KFORGE_LAUNCH(false, 0);
    }
#undef KFORGE_LAUNCH
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

torch::Tensor gemm_bias_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double scale) {
    check_cuda_f32(x, "x");
    check_cuda_f32(weight, "weight");
    check_cuda_f32(bias, "bias");
    const int M = (int)x.size(0), K = (int)x.size(1), N = (int)weight.size(0);
    TORCH_CHECK(weight.size(1) == K && bias.numel() == N, "shape mismatch");
    auto y = torch::empty({M, N}, x.options());
    if (M == 0 || N == 0) return y;
    launch_sgemm(x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), nullptr,
                 y.data_ptr<float>(), M, N, K, 1, 0, 0, 0, true, 1, (float)scale);
    return y;
}
"""

gemm_bias_relu_ext = load_inline(
    name="kforge_cuda_gemm_bias_relu",
    cpp_sources=gemm_bias_relu_cpp_source,
    cuda_sources=gemm_bias_relu_cuda_source,
    functions=["gemm_bias_relu_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return gemm_bias_relu_ext.gemm_bias_relu_forward(
            x.contiguous(), self.linear.weight, self.linear.bias, self.scale
        )
