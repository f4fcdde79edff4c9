# kforge-problem: level3/resnet_block.py
# kforge-expect: ok
# Honest CPU candidate: conv3x3+ReLU, conv3x3 + identity residual + ReLU, in one C++ call.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

resnet_source = r"""
#include <torch/extension.h>
#include <algorithm>
#include <vector>

// out[n,o] = bias[o] + sum_c conv3x3(in[n,c], w[o,c]) with zero padding 1, stride 1.
static void conv3x3(const float* X, const float* Wt, const float* Bs, float* Y,
                    int64_t Nb, int64_t C, int64_t O, int64_t H, int64_t W) {
    for (int64_t n = 0; n < Nb; ++n) {
        for (int64_t o = 0; o < O; ++o) {
            float* __restrict__ yp = Y + (n * O + o) * H * W;
            for (int64_t i = 0; i < H * W; ++i) yp[i] = Bs[o];
            for (int64_t c = 0; c < C; ++c) {
                const float* xp = X + (n * C + c) * H * W;
                for (int64_t kh = 0; kh < 3; ++kh) {
                    for (int64_t kw = 0; kw < 3; ++kw) {
                        const float wv = Wt[((o * C + c) * 3 + kh) * 3 + kw];
                        const int64_t dy = kh - 1, dx = kw - 1;
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
        }
    }
}

torch::Tensor resnet_block_forward(torch::Tensor x, torch::Tensor w1, torch::Tensor b1,
                                   torch::Tensor w2, torch::Tensor b2) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat && x.is_contiguous(), "bad x");
    TORCH_CHECK(w1.is_contiguous() && w2.is_contiguous() && b1.is_contiguous() && b2.is_contiguous(),
                "contiguous weights expected");
    const int64_t Nb = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    TORCH_CHECK(w1.size(0) == C && w1.size(1) == C && w2.size(0) == C && w2.size(1) == C &&
                w1.size(2) == 3 && w1.size(3) == 3 && w2.size(2) == 3 && w2.size(3) == 3, "shape mismatch");
    const int64_t total = Nb * C * H * W;
    std::vector<float> mid(static_cast<size_t>(total));
    conv3x3(x.data_ptr<float>(), w1.data_ptr<float>(), b1.data_ptr<float>(), mid.data(), Nb, C, C, H, W);
    for (int64_t i = 0; i < total; ++i) mid[i] = mid[i] > 0.0f ? mid[i] : 0.0f;
    auto y = torch::empty_like(x);
    float* Y = y.data_ptr<float>();
    conv3x3(mid.data(), w2.data_ptr<float>(), b2.data_ptr<float>(), Y, Nb, C, C, H, W);
    const float* X = x.data_ptr<float>();
    for (int64_t i = 0; i < total; ++i) {
        const float v = Y[i] + X[i];
        Y[i] = v > 0.0f ? v : 0.0f;
    }
    return y;
}
"""

resnet_ext = load_inline(
    name="kforge_cpu_resnet_block",
    cpp_sources=resnet_source,
    functions=["resnet_block_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return resnet_ext.resnet_block_forward(
            x.contiguous(), self.conv1.weight, self.conv1.bias, self.conv2.weight, self.conv2.bias
        )
