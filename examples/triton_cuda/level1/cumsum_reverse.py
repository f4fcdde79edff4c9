# kforge-problem: level1/cumsum_reverse.py
# kforge-problem-kb: level1/91_cumsum_reverse.py
# kforge-expect: ok
# Reverse cumulative sum along a dimension, in one pass: one program per line along that
# dimension walks it from the end in 2048-wide blocks, scans each block (tl.cumsum over the
# block read back to front) and adds the sum of the blocks already done. Eager flips (read,
# write), scans (read, write) and flips back (read, write): six passes over 4 GB at
# KernelBench's 32768 x 32768 (91_cumsum_reverse), against one read and one write here.
# Lines along the last dimension are contiguous; along another they are read strided.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_reverse_kernel(x_ptr, y_ptr, length, inner, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    base = (pid // inner) * length * inner + pid % inner
    carry = 0.0
    for c0 in range(0, length, BLOCK):
        k = c0 + tl.arange(0, BLOCK)
        mask = k < length
        at = base + (length - 1 - k) * inner
        x = tl.load(x_ptr + at, mask=mask, other=0.0)
        tl.store(y_ptr + at, tl.cumsum(x, axis=0) + carry, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        dim = self.dim % x.dim()
        length = x.shape[dim]
        inner = x.stride(dim)
        lines = x.numel() // length
        cumsum_reverse_kernel[(lines,)](x, y, length, inner,
                                        BLOCK=min(2048, triton.next_power_of_2(length)),
                                        num_warps=4)
        return y
