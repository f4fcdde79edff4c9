# kforge-problem: level2/conv1d_tanh_maxpool.py
# kforge-expect: ok
# Conv1d ("same" padding) + tanh + MaxPool1d(2) fused: each program computes the two conv
# outputs under a block of pooled positions, applies tanh to both and keeps the larger.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv_tanh_pool_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C_in, L_in, L_pool, KS, PAD,
                          stride_xb, stride_xc, stride_wo, stride_wi, stride_yb, stride_yc,
                          BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    co = tl.program_id(1)
    bi = tl.program_id(2)
    keep = p < L_pool
    acc0 = tl.zeros((BLOCK,), dtype=tl.float32)
    acc1 = tl.zeros((BLOCK,), dtype=tl.float32)
    for ci in range(0, C_in):
        x_row = x_ptr + bi * stride_xb + ci * stride_xc
        w_row = w_ptr + co * stride_wo + ci * stride_wi
        for k in range(0, KS):
            w = tl.load(w_row + k)
            i0 = 2 * p + k - PAD
            i1 = i0 + 1
            acc0 += w * tl.load(x_row + i0, mask=keep & (i0 >= 0) & (i0 < L_in), other=0.0)
            acc1 += w * tl.load(x_row + i1, mask=keep & (i1 >= 0) & (i1 < L_in), other=0.0)
    bias = tl.load(b_ptr + co)
    t0 = 2.0 * tl.sigmoid(2.0 * (acc0 + bias)) - 1.0
    t1 = 2.0 * tl.sigmoid(2.0 * (acc1 + bias)) - 1.0
    tl.store(y_ptr + bi * stride_yb + co * stride_yc + p, tl.maximum(t0, t1), mask=keep)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        x = x.contiguous()
        w = self.conv.weight.contiguous()
        B, C_in, L_in = x.shape
        C_out, _, KS = w.shape
        pad = self.conv.padding[0]
        L_conv = L_in + 2 * pad - KS + 1
        L_pool = L_conv // 2
        y = torch.empty((B, C_out, L_pool), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(L_pool, 128), C_out, B)
        conv_tanh_pool_kernel[grid](x, w, self.conv.bias, y, C_in, L_in, L_pool, KS, pad,
                                    x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                                    y.stride(0), y.stride(1), BLOCK=128, num_warps=4)
        return y
