# kforge-problem: level2/conv2d_relu_scale.py
# kforge-expect: ok
# Honest CPU candidate: direct 3x3 "same" convolution with bias, ReLU, scale and shift fused in.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

conv_relu_scale_source = r"""
#include <torch/extension.h>
#include <algorithm>

torch::Tensor conv2d_relu_scale_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                        double scale, torch::Tensor shift) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat, "x must be CPU float32");
    TORCH_CHECK(x.is_contiguous() && weight.is_contiguous() && bias.is_contiguous() && shift.is_contiguous(),
                "contiguous tensors expected");
    TORCH_CHECK(x.dim() == 4 && weight.dim() == 4 && weight.size(1) == x.size(1), "shape mismatch");
    const int64_t Nb = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t O = weight.size(0), KH = weight.size(2), KW = weight.size(3);
    const int64_t ph = KH / 2, pw = KW / 2;  // "same" padding, stride 1
    TORCH_CHECK(bias.numel() == O && shift.numel() == O, "bias/shift size mismatch");
    auto y = torch::empty({Nb, O, H, W}, x.options());
    const float* X = x.data_ptr<float>();
    const float* Wt = weight.data_ptr<float>();
    const float* Bs = bias.data_ptr<float>();
    const float* Sh = shift.data_ptr<float>();
    float* Y = y.data_ptr<float>();
    const float s = static_cast<float>(scale);
    for (int64_t n = 0; n < Nb; ++n) {
        for (int64_t o = 0; o < O; ++o) {
            float* __restrict__ yp = Y + (n * O + o) * H * W;
            for (int64_t i = 0; i < H * W; ++i) yp[i] = Bs[o];
            for (int64_t c = 0; c < C; ++c) {
                const float* xp = X + (n * C + c) * H * W;
                for (int64_t kh = 0; kh < KH; ++kh) {
                    for (int64_t kw = 0; kw < KW; ++kw) {
                        const float wv = Wt[((o * C + c) * KH + kh) * KW + kw];
                        const int64_t dy = kh - ph, dx = kw - pw;
                        const int64_t h0 = std::max<int64_t>(0, -dy), h1 = std::min<int64_t>(H, H - dy);
                        const int64_t w0 = std::max<int64_t>(0, -dx), w1 = std::min<int64_t>(W, W - dx);
                        for (int64_t h = h0; h < h1; ++h) {
                            float* __restrict__ yr = yp + h * W;
                            const float* __restrict__ xr = xp + (h + dy) * W + dx;
                            for (int64_t w = w0; w < w1; ++w) yr[w] += wv * xr[w];
                        }
                    }
                }
            }
            const float sh = Sh[o];
            for (int64_t i = 0; i < H * W; ++i) {
                const float v = yp[i];
                yp[i] = (v > 0.0f ? v : 0.0f) * s + sh;
            }
        }
    }
    return y;
}
"""

conv_relu_scale_ext = load_inline(
    name="kforge_cpu_conv2d_relu_scale",
    cpp_sources=conv_relu_scale_source,
    functions=["conv2d_relu_scale_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.scale = scale
        self.shift = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        return conv_relu_scale_ext.conv2d_relu_scale_forward(
            x.contiguous(), self.conv.weight, self.conv.bias, self.scale, self.shift
        )
