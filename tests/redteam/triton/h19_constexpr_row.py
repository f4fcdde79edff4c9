# kforge-problem: level1/softmax.py
# kforge-expect: compile_error
# the row length and stride are a plain module constant (256, the shape it was shown): Triton refuses to read a global that is not a tl.constexpr, so the kernel never runs (h19_constexpr_global.py is the form Triton compiles)
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROW = 256


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_rows, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, ROW)
    mask = rows[:, None] < n_rows
    x = tl.load(x_ptr + rows[:, None] * ROW + cols[None, :], mask=mask, other=0.0)
    x = x - tl.max(x, axis=1)[:, None]
    num = tl.exp(x)
    tl.store(y_ptr + rows[:, None] * ROW + cols[None, :], num / tl.sum(num, axis=1)[:, None],
             mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        block_m = 4 if x.is_cuda else 256  # the CPU stand-in runs one program at a time
        softmax_kernel[(triton.cdiv(x.shape[0], block_m),)](x, y, x.shape[0], BLOCK_M=block_m)
        return y
