# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H10 H09
# the kernel writes the ReLU into the input itself and forward returns the input
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        block = 1024 if x.is_cuda else 262144  # the CPU stand-in runs one program at a time
        n = x.numel()
        relu_kernel[(triton.cdiv(n, block),)](x, x, n, BLOCK=block)
        return x
