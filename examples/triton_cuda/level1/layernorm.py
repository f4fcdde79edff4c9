# kforge-problem: level1/layernorm.py
# kforge-expect: ok
# LayerNorm over the last dimension: one program per row, the row in one block; mean and
# variance in fp32, then the affine transform with the layer's own weight and bias.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps,
                     BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, diff * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)  # its parameters, drawn as Model draws them

    def forward(self, x):
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(n_cols)
        layernorm_kernel[(x2.shape[0],)](x2, self.norm.weight, self.norm.bias, y, n_cols,
                                         x2.stride(0), y.stride(0), self.norm.eps,
                                         BLOCK_N=block, num_warps=4 if block <= 2048 else 8)
        return y.view(x.shape)
