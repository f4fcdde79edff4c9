# kforge-problem: level1/l1norm.py
# kforge-problem-kb: level1/38_L1Norm_.py
# kforge-expect: ok
# x / mean(|x|) along each row of a 2-D input. One program per row walks it twice in 4096-wide
# blocks: once for the sum of absolute values, once to write x / mean. A 65535-wide row (256 KB,
# KernelBench's 38_L1Norm_) is too big to keep on chip, so that is two reads and one write; eager
# runs abs (read, write), the mean (read) and the division (read, write): five passes over
# 8.6 GB against three.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def l1norm_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        total += tl.abs(tl.load(x_row + cols, mask=cols < n_cols, other=0.0))
    mean = tl.sum(total, axis=0) / n_cols
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, x / mean, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n_cols = x.shape[1]
        l1norm_kernel[(x.shape[0],)](x, y, n_cols, x.stride(0), y.stride(0),
                                     BLOCK=min(4096, triton.next_power_of_2(n_cols)), num_warps=8)
        return y
