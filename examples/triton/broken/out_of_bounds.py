# kforge-problem: level1/relu.py
# kforge-expect: runtime_error
# A Triton kernel that stores past the end of its output (no mask): on a GPU an illegal memory
# access, in the CPU stand-in an IndexError; either way runtime_error, and the next candidate
# gets a fresh process.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) + n_elements
    x = tl.load(x_ptr + offsets)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        block = 1024 if x.is_cuda else 262144  # the CPU stand-in runs one program at a time
        relu_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
        return y
