# kforge-problem: level1/relu.py
# kforge-expect: compile_error
# A Triton kernel its compiler refuses (a name it cannot resolve): the verdict is compile_error
# at this file's line, from Triton's own "at LINE:COL:" message.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(x, zero), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        block = 1024 if x.is_cuda else 262144  # the CPU stand-in runs one program at a time
        relu_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
        return y
