# kforge-problem: level1/conv2d.py
# kforge-expect: ok
# Direct 2-D convolution (stride 1, "same" padding) with bias: a program per (batch, output
# channel, block of 256 output pixels); out-of-image taps are masked to zero.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(x_ptr, w_ptr, b_ptr, y_ptr, C_in, H, W, KS, PAD,
                  stride_xb, stride_xc, stride_xh, stride_wo, stride_wi, stride_wh,
                  stride_yb, stride_yc, stride_yh, BLOCK: tl.constexpr):
    pix = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    co = tl.program_id(1)
    bi = tl.program_id(2)
    inside = pix < H * W
    oh = pix // W
    ow = pix % W
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for ci in range(0, C_in):
        x_plane = x_ptr + bi * stride_xb + ci * stride_xc
        w_plane = w_ptr + co * stride_wo + ci * stride_wi
        for kh in range(0, KS):
            ih = oh + kh - PAD
            row_ok = inside & (ih >= 0) & (ih < H)
            for kw in range(0, KS):
                iw = ow + kw - PAD
                ok = row_ok & (iw >= 0) & (iw < W)
                w = tl.load(w_plane + kh * stride_wh + kw)
                acc += w * tl.load(x_plane + ih * stride_xh + iw, mask=ok, other=0.0)
    acc += tl.load(b_ptr + co)
    tl.store(y_ptr + bi * stride_yb + co * stride_yc + oh * stride_yh + ow, acc, mask=inside)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        x = x.contiguous()
        w = self.conv.weight.contiguous()
        B, C_in, H, W = x.shape
        C_out, _, KS, _ = w.shape
        y = torch.empty((B, C_out, H, W), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(H * W, 256), C_out, B)
        conv2d_kernel[grid](x, w, self.conv.bias, y, C_in, H, W, KS, KS // 2, x.stride(0),
                            x.stride(1), x.stride(2), w.stride(0), w.stride(1), w.stride(2),
                            y.stride(0), y.stride(1), y.stride(2), BLOCK=256, num_warps=4)
        return y
