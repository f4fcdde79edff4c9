# kforge-problem: level1/max_dim.py
# kforge-expect: ok
# Row maximum: one program per row.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, y_ptr, n_cols, stride_x, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(y_ptr + row, tl.max(x, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        row_max_kernel[(n_rows,)](x, y, n_cols, x.stride(0),
                                  BLOCK_N=triton.next_power_of_2(n_cols), num_warps=4)
        return y
