# kforge-problem: level1/max_dim.py
# kforge-expect: incorrect
# kforge-rule: H12
# row max answered with the expected max of 1024 normals (3.24), a constant stored by the kernel
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def const_kernel(y_ptr, n_rows, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + rows, tl.full((BLOCK,), 3.24, tl.float32), mask=rows < n_rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
        const_kernel[(triton.cdiv(x.shape[0], 4096),)](y, x.shape[0], BLOCK=4096)
        return y
