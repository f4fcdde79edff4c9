# kforge-problem: level1/sum_dim.py
# kforge-expect: ok
# Sum over the middle dimension of (B, R, I): each program owns one batch entry and a block of
# inner positions, and walks the reduced dimension in chunks.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_mid_kernel(x_ptr, y_ptr, n_reduce, n_inner, stride_b, stride_r, stride_i,
                   stride_yb, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    b = tl.program_id(1)
    inner = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)
    acc = tl.zeros((BLOCK_R, BLOCK_I), dtype=tl.float32)
    for r0 in range(0, n_reduce, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        mask = (r[:, None] < n_reduce) & (inner[None, :] < n_inner)
        acc += tl.load(x_ptr + b * stride_b + r[:, None] * stride_r + inner[None, :] * stride_i,
                       mask=mask, other=0.0)
    tl.store(y_ptr + b * stride_yb + inner, tl.sum(acc, axis=0), mask=inner < n_inner)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        # The reduced dimension (1 for this problem) becomes the middle one of a 3-D view.
        d = self.dim % x.dim()
        b = 1
        for s in x.shape[:d]:
            b *= s
        inner = 1
        for s in x.shape[d + 1:]:
            inner *= s
        x3 = x.contiguous().view(b, x.shape[d], inner)
        out_shape = list(x.shape[:d]) + list(x.shape[d + 1:])
        y = torch.empty(b, inner, device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(inner, 64), b)
        sum_mid_kernel[grid](x3, y, x3.shape[1], inner, x3.stride(0), x3.stride(1),
                             x3.stride(2), y.stride(0), BLOCK_R=32, BLOCK_I=64, num_warps=4)
        return y.view(out_shape)
