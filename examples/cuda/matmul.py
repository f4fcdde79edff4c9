# kforge-problem: level1/matmul.py
# kforge-expect: ok
# Honest CUDA candidate: shared-memory tiled SGEMM, 64x64 block tiles, 4x4 outputs per thread.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

matmul_cpp_source = "torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b);"

matmul_cuda_source = r"""
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

torch::Tensor matmul_forward(torch::Tensor a, torch::Tensor b) {
    check_cuda_f32(a, "a");
    check_cuda_f32(b, "b");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "shape mismatch");
    const int M = (int)a.size(0), K = (int)a.size(1), N = (int)b.size(1);
    auto c = torch::empty({M, N}, a.options());
    if (M == 0 || N == 0) return c;
    launch_sgemm(a.data_ptr<float>(), b.data_ptr<float>(), nullptr, nullptr, c.data_ptr<float>(),
                 M, N, K, 1, 0, 0, 0, false, 0, 1.0f);
    return c;
}
"""

matmul_ext = load_inline(
    name="kforge_cuda_matmul",
    cpp_sources=matmul_cpp_source,
    cuda_sources=matmul_cuda_source,
    functions=["matmul_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return matmul_ext.matmul_forward(a.contiguous(), b.contiguous())
