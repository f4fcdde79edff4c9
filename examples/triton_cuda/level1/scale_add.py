# kforge-problem: level1/scale_add.py
# kforge-expect: ok
# alpha * x + beta * y in one pass over both inputs.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def axpby_kernel(x_ptr, y_ptr, out_ptr, n_elements, alpha, beta, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    tl.store(out_ptr + offsets, alpha * x + beta * y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha, beta):
        super().__init__()
        self.alpha = float(alpha)
        self.beta = float(beta)

    def forward(self, x, y):
        x = x.contiguous()
        y = y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        axpby_kernel[(triton.cdiv(n, 2048),)](x, y, out, n, self.alpha, self.beta, BLOCK=2048,
                                              num_warps=8)
        return out
