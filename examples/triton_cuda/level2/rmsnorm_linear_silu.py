# kforge-problem: level2/rmsnorm_linear_silu.py
# kforge-expect: ok
# RMSNorm into a scratch buffer (one program per row), then Linear without bias with SiLU
# fused into the GEMM's epilogue (IEEE fp32 tl.dot).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    rms = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, x * rms * w, mask=mask)


@triton.jit
def linear_silu_kernel(x_ptr, w_ptr, y_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk,
                       stride_ym, stride_yn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :] * stride_xk,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rk[:, None] * stride_wk + rn[None, :] * stride_wn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, w, input_precision="ieee")
    out = acc * tl.sigmoid(acc)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, out,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, eps):
        super().__init__()
        self.eps = float(eps)
        # Drawn in Model's order: the norm's weight, then the linear layer's.
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(in_features))
        self.linear = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        normed = torch.empty_like(x)
        rmsnorm_kernel[(M,)](x, self.weight, normed, K, x.stride(0), normed.stride(0), self.eps,
                             BLOCK_N=triton.next_power_of_2(K), num_warps=4)
        w = self.linear.weight
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        linear_silu_kernel[grid](normed, w, y, M, N, K, normed.stride(0), normed.stride(1),
                                 w.stride(0), w.stride(1), y.stride(0), y.stride(1), BLOCK_M=64,
                                 BLOCK_N=64, BLOCK_K=32, num_warps=4)
        return y
