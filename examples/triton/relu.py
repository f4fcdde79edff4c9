# kforge-problem: level1/relu.py
# kforge-expect: ok
# Honest Triton candidate for the CPU stand-in (tests/triton/fake_triton): an elementwise ReLU.
# Blocks are large because the stand-in runs one program at a time in Python; on a GPU the
# same kernel wants BLOCK = 1024 (examples/triton_cuda/relu.py).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        relu_kernel[grid](x, y, n, BLOCK=262144)
        return y
