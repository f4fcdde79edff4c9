# kforge-problem: level2/layernorm_gelu_residual.py
# kforge-expect: ok
# x + GELU(LayerNorm(x)) in one pass per row: normalise, GELU (tanh form), add the residual.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ln_gelu_residual_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps,
                            BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    diff = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    h = diff * rstd * w + b
    u = 0.7978845608028654 * (h + 0.044715 * h * h * h)
    g = 0.5 * h * (1.0 + (2.0 * tl.sigmoid(2.0 * u) - 1.0))
    tl.store(y_ptr + row * stride_y + cols, x + g, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        x = x.contiguous()
        n_cols = x.shape[-1]
        x2 = x.view(-1, n_cols)
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(n_cols)
        ln_gelu_residual_kernel[(x2.shape[0],)](x2, self.norm.weight, self.norm.bias, y, n_cols,
                                                x2.stride(0), y.stride(0), self.norm.eps,
                                                BLOCK_N=block, num_warps=4 if block <= 2048 else 8)
        return y.view(x.shape)
