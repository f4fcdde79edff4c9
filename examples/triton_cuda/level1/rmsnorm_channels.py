# kforge-problem: level1/rmsnorm_channels.py
# kforge-problem-kb: level1/36_RMSNorm_.py
# kforge-expect: ok
# RMSNorm over the channels of an NCHW tensor (no weight). Each program holds every channel of
# a run of spatial positions (64 x 128 at KernelBench's sizes, each channel's run a contiguous
# 512 bytes), sums the squares down the channels and writes x / rms: one read and one write.
# Eager runs three kernels over the whole tensor, x ** 2 (read, write), the mean over dim 1
# (read) and x / rms (read, write): five passes over 7.5 GB at 36_RMSNorm_'s
# 112 x 64 x 512 x 512, against two here.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_channels_kernel(x_ptr, y_ptr, C, S, n_sblocks, eps, BLOCK_C: tl.constexpr,
                            BLOCK_S: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // n_sblocks
    s = (pid % n_sblocks) * BLOCK_S + tl.arange(0, BLOCK_S)
    c = tl.arange(0, BLOCK_C)
    mask = (c[:, None] < C) & (s[None, :] < S)
    offs = b * C * S + c[:, None] * S + s[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / C + eps)
    tl.store(y_ptr + offs, x / rms[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = float(eps)

    def forward(self, x):
        x = x.contiguous()
        B, C = x.shape[0], x.shape[1]
        S = x.numel() // (B * C)
        y = torch.empty_like(x)
        block_c = triton.next_power_of_2(C)
        block_s = max(16, min(1024, 8192 // block_c))
        n_sblocks = triton.cdiv(S, block_s)
        rmsnorm_channels_kernel[(B * n_sblocks,)](x, y, C, S, n_sblocks, self.eps,
                                                  BLOCK_C=block_c, BLOCK_S=block_s, num_warps=8)
        return y
