# kforge-problem: level1/softmax.py
# kforge-expect: ok
# Honest Triton candidate for the CPU stand-in (tests/triton/fake_triton): a row softmax, many
# rows per program (the stand-in runs one program at a time in Python), each row in one block.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_x, stride_y,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=1)[:, None]
    num = tl.where(mask, tl.exp(x), 0.0)
    den = tl.sum(num, axis=1)[:, None]
    tl.store(y_ptr + rows[:, None] * stride_y + cols[None, :], num / den, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        block_m = 256
        grid = (triton.cdiv(n_rows, block_m),)
        softmax_kernel[grid](x, y, n_rows, n_cols, x.stride(0), y.stride(0),
                             BLOCK_M=block_m, BLOCK_N=triton.next_power_of_2(n_cols))
        return y
