# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H02 H01
# a Triton kernel is defined and never launched; numpy computes the answer (no torch compute call)
import torch
import torch.nn as nn
import triton
import triton.language as tl

import numpy as np


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
        return torch.from_numpy(np.maximum(x.cpu().numpy(), 0.0)).to(x.device)
