# kforge-problem: level1/rmsnorm.py
# kforge-expect: ok
# RMSNorm: one program per row, x * rsqrt(mean(x^2) + eps) * weight.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    rms = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, x * rms * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = float(eps)
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))  # drawn as Model draws it

    def forward(self, x):
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        y = torch.empty_like(x2)
        rmsnorm_kernel[(x2.shape[0],)](x2, self.weight, y, n_cols, x2.stride(0), y.stride(0),
                                       self.eps, BLOCK_N=triton.next_power_of_2(n_cols),
                                       num_warps=4)
        return y.view(x.shape)
