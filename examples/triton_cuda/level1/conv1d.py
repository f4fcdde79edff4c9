# kforge-problem: level1/conv1d.py
# kforge-expect: ok
# Direct 1-D convolution (stride 1, no padding) with bias: a program per (batch, output
# channel, block of 128 output positions) accumulates input channels x taps.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv1d_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C_in, L_in, L_out, KS,
                  stride_xb, stride_xc, stride_wo, stride_wi, stride_yb, stride_yc,
                  BLOCK_L: tl.constexpr):
    pos = tl.program_id(0) * BLOCK_L + tl.arange(0, BLOCK_L)
    co = tl.program_id(1)
    bi = tl.program_id(2)
    mask = pos < L_out
    acc = tl.zeros((BLOCK_L,), dtype=tl.float32)
    for ci in range(0, C_in):
        x_row = x_ptr + bi * stride_xb + ci * stride_xc
        w_row = w_ptr + co * stride_wo + ci * stride_wi
        for k in range(0, KS):
            w = tl.load(w_row + k)
            acc += w * tl.load(x_row + pos + k, mask=mask, other=0.0)
    acc += tl.load(b_ptr + co)
    tl.store(y_ptr + bi * stride_yb + co * stride_yc + pos, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)  # its weight and bias

    def forward(self, x):
        x = x.contiguous()
        w = self.conv.weight.contiguous()
        B, C_in, L_in = x.shape
        C_out, _, KS = w.shape
        L_out = L_in - KS + 1
        y = torch.empty((B, C_out, L_out), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(L_out, 128), C_out, B)
        conv1d_kernel[grid](x, w, self.conv.bias, y, C_in, L_in, L_out, KS, x.stride(0),
                            x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
                            BLOCK_L=128, num_warps=4)
        return y
