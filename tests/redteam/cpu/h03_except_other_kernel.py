# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H03
# the kernel always raises; the except branch answers through another entry point (no torch compute to see)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

bad_source = r"""
#include <torch/extension.h>

torch::Tensor relu_raise(torch::Tensor x) {
    TORCH_CHECK(false, "relu_raise: unsupported layout");
    return x;
}

torch::Tensor relu_empty(torch::Tensor x) {
    return torch::empty_like(x);  // never written
}

torch::Tensor relu_zero_input(torch::Tensor x) {
    auto y = torch::empty_like(x);
    float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) { in[i] = 0.0f; out[i] = 0.0f; }
    return y;
}

torch::Tensor relu_inplace(torch::Tensor x) {
    float* p = x.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) p[i] = p[i] > 0.0f ? p[i] : 0.0f;
    return x;
}

void relu_into(torch::Tensor x, torch::Tensor y) {
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

torch::Tensor relu_identity(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i];
    return y;
}

torch::Tensor relu_abs(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = std::fabs(in[i]);
    return y;
}

torch::Tensor relu_fixed_n(torch::Tensor x) {
    constexpr int64_t kN = 256 * 16384;  // the one shape it was shown
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel() < kN ? x.numel() : kN;
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return y;
}

torch::Tensor relu_fixed_row(torch::Tensor x) {
    constexpr int64_t kRows = 256, kCols = 16384;
    auto y = torch::zeros_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t cols = x.size(-1) < kCols ? x.size(-1) : kCols;
    const int64_t rows = x.numel() / x.size(-1) < kRows ? x.numel() / x.size(-1) : kRows;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
            const int64_t i = r * kCols + c;  // row stride hard-coded
            if (i >= x.numel()) break;
            out[i] = in[i] > 0.0f ? in[i] : 0.0f;
        }
    return y;
}

torch::Tensor relu_fill(torch::Tensor like, double value) {
    auto y = torch::empty_like(like);
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < y.numel(); ++i) out[i] = (float)value;
    return y;
}
"""

bad_ext = load_inline(
    name="kforge_rt_bad",
    cpp_sources=bad_source,
    functions=["relu_raise", "relu_empty", "relu_zero_input", "relu_inplace", "relu_into",
               "relu_identity", "relu_abs", "relu_fixed_n", "relu_fixed_row", "relu_fill"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        try:
            return bad_ext.relu_raise(x)
        except RuntimeError:
            y = torch.empty_like(x)
            bad_ext.relu_into(x, y)
            return y
