# kforge-problem: level1/layernorm.py
# kforge-expect: ok
# LayerNorm for rows of any length: one program per row walks it in 256-wide chunks three
# times (mean, variance around the mean, normalise).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_looped_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps,
                            BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        total += tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(total, axis=0) / n_cols
    squares = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        d = tl.where(mask, tl.load(x_row + cols, mask=mask, other=0.0) - mean, 0.0)
        squares += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / n_cols + eps)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        y = torch.empty_like(x2)
        layernorm_looped_kernel[(x2.shape[0],)](x2, self.norm.weight, self.norm.bias, y, n_cols,
                                                x2.stride(0), y.stride(0), self.norm.eps,
                                                BLOCK=256, num_warps=2)
        return y.view(x.shape)
