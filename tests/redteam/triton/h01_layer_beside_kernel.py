# kforge-problem: level2/gemm_bias_relu.py
# kforge-expect: cheat
# kforge-rule: H01
# kforge-expect-kernelbench: ok
# kforge-rule-kernelbench: H01
# the GEMM is the nn.Linear ModelNew holds; only ReLU and the scale are a Triton kernel (KernelBench's usual level-2 answer)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_scale_kernel(x_ptr, y_ptr, n_elements, scale, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, tl.maximum(x, 0.0) * scale, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        block = 1024 if x.is_cuda else 262144  # the CPU stand-in runs one program at a time
        h = self.linear(x).contiguous()
        y = torch.empty_like(h)
        n = h.numel()
        relu_scale_kernel[(triton.cdiv(n, block),)](h, y, n, self.scale, BLOCK=block)
        return y
