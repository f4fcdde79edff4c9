# kforge-problem: level1/relu.py
# kforge-expect: incorrect
# kforge-rule: H19
# the element count is a tl.constexpr baked from the problem's own constants (batch_size * dim): larger inputs are left unwritten
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        block = 1024 if x.is_cuda else 262144  # the CPU stand-in runs one program at a time
        y = torch.zeros_like(x)
        relu_kernel[(triton.cdiv(batch_size * dim, block),)](x, y, N=batch_size * dim, BLOCK=block)
        return y
