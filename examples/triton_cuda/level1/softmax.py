# kforge-problem: level1/softmax.py
# kforge-problem-kb: level1/23_Softmax.py
# kforge-expect: ok
# Row softmax. Rows up to 8192 wide: one program per row, the whole row in one block. Wider
# rows (KernelBench's 23_Softmax): one program per row walks it in 4096-wide chunks, first
# keeping a running maximum and a rescaled running sum, then writing exp(x - max) / sum.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.where(mask, tl.exp(x), 0.0)
    tl.store(y_ptr + row * stride_y + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def softmax_looped_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    # Per lane: the largest value seen and the sum of exp(value - that maximum).
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, x)
        s = s * tl.exp(tl.where(m_new == -float("inf"), 0.0, m - m_new)) + \
            tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, tl.exp(x - row_max) / total, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        y = torch.empty_like(x2)
        if n_cols <= 8192:
            block = triton.next_power_of_2(n_cols)
            softmax_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK_N=block,
                                           num_warps=4 if block <= 2048 else 8)
        else:
            softmax_looped_kernel[(x2.shape[0],)](x2, y, n_cols, x2.stride(0), y.stride(0),
                                                  BLOCK=4096, num_warps=8)
        return y.view(x.shape)
