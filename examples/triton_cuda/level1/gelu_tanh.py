# kforge-problem: level1/gelu_tanh.py
# kforge-problem-kb: level1/88_MinGPTNewGelu.py
# kforge-expect: ok
# GELU (tanh approximation), tanh(u) written as 2 * sigmoid(2u) - 1. KernelBench's
# 88_MinGPTNewGelu writes the same function out in eight PyTorch ops, each a kernel of its own
# over the 8192 x 8192 input; this is one read and one write.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = 2.0 * tl.sigmoid(2.0 * u) - 1.0
    tl.store(y_ptr + offsets, 0.5 * x * (1.0 + t), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        gelu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024, num_warps=4)
        return y
