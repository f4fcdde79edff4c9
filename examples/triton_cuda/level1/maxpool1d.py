# kforge-problem: level1/maxpool1d.py
# kforge-problem-kb: level1/41_Max_Pooling_1D.py
# kforge-expect: ok
# MaxPool1d with stride, padding and dilation: each program takes 1024 outputs of one
# (batch, channel) row and keeps the largest of the K inputs under each (padding reads as
# -inf, NaN wins as in PyTorch). On CUDA, eager max_pool1d runs max_pool2d_with_indices and
# writes an int64 index beside every float it returns; this writes the values alone: 4 bytes
# read and 4 written per output against 4 read and 12 written (41_Max_Pooling_1D: 64 x 192 x
# 65536, kernel 8, dilation 3).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def maxpool1d_kernel(x_ptr, y_ptr, L_in, L_out, n_blocks, K, stride, padding, dilation,
                     BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = pid // n_blocks
    o = (pid % n_blocks) * BLOCK + tl.arange(0, BLOCK)
    keep = o < L_out
    first = o * stride - padding
    best = tl.full((BLOCK,), -float("inf"), tl.float32)
    for k in range(0, K):
        i = first + k * dilation
        v = tl.load(x_ptr + row * L_in + i, mask=keep & (i >= 0) & (i < L_in),
                    other=-float("inf"))
        best = tl.where((v > best) | (v != v), v, best)
    tl.store(y_ptr + row * L_out + o, best, mask=keep)


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False):
        super().__init__()
        if return_indices:
            raise ValueError("this kernel returns the maxima only, not their indices")
        self.kernel_size = int(kernel_size)
        self.stride = int(stride) if stride else self.kernel_size
        self.padding = int(padding)
        self.dilation = int(dilation)

    def forward(self, x):
        x = x.contiguous()
        L_in = x.shape[-1]
        L_out = (L_in + 2 * self.padding - self.dilation * (self.kernel_size - 1) - 1) \
            // self.stride + 1
        y = torch.empty(x.shape[:-1] + (L_out,), device=x.device, dtype=x.dtype)
        block = min(1024, triton.next_power_of_2(L_out))
        n_blocks = triton.cdiv(L_out, block)
        rows = x.numel() // L_in
        maxpool1d_kernel[(rows * n_blocks,)](x, y, L_in, L_out, n_blocks, self.kernel_size,
                                             self.stride, self.padding, self.dilation,
                                             BLOCK=block, num_warps=4)
        return y
