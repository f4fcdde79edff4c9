# kforge-problem: level2/gemm_bias_relu.py
# kforge-expect: ok
# Linear + ReLU + scale in one kernel: x @ W^T tiles (IEEE fp32 tl.dot), then bias, ReLU and
# the scale applied to the accumulator before the single store.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_relu_scale_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, scale, stride_xm, stride_xk,
                             stride_wn, stride_wk, stride_ym, stride_yn, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :] * stride_xk,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        # W is (N, K); its transpose tile (BLOCK_K, BLOCK_N) read through the strides.
        w = tl.load(w_ptr + rk[:, None] * stride_wk + rn[None, :] * stride_wn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, w, input_precision="ieee")
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    out = tl.maximum(acc + bias[None, :], 0.0) * scale
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, out,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # its weight and bias
        self.scale = float(scale)

    def forward(self, x):
        x = x.contiguous()
        w = self.linear.weight
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        linear_relu_scale_kernel[grid](x, w, self.linear.bias, y, M, N, K, self.scale,
                                       x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                       y.stride(0), y.stride(1), BLOCK_M=64, BLOCK_N=64,
                                       BLOCK_K=32, num_warps=4)
        return y
