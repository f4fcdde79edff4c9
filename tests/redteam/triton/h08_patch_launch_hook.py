# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H08
# puts Triton's launch entry point back to what it was before kforge hooked it, so launches go uncounted and the ghost replay runs them
import torch
import torch.nn as nn
import triton
import triton.language as tl

import triton.runtime.jit


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


_run = triton.runtime.jit.JITFunction.run
triton.runtime.jit.JITFunction.run = getattr(_run, "__wrapped__", _run)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        block = 1024 if x.is_cuda else 262144  # the CPU stand-in runs one program at a time
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
        return y
