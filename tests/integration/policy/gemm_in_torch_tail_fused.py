# The level-2 pattern most models write: the GEMM stays in PyTorch (nn.Linear without its bias),
# and the candidate's own kernel fuses the tail (bias, ReLU, scale). KernelBench counts it
# correct; MooreEval's allowlist calls it fallback. kforge: cheat H01 under --policy strict, ok
# under --policy kernelbench with aten::mm listed (tests/integration/policy_test.py).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

tail_source = r"""
#include <torch/extension.h>

torch::Tensor bias_relu_scale(torch::Tensor y, torch::Tensor bias, double scale) {
    TORCH_CHECK(y.is_contiguous() && y.scalar_type() == torch::kFloat, "contiguous float32 expected");
    auto out = torch::empty_like(y);
    const int64_t rows = y.size(0), cols = y.size(1);
    const float* Y = y.data_ptr<float>();
    const float* B = bias.data_ptr<float>();
    float* O = out.data_ptr<float>();
    const float s = static_cast<float>(scale);
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
            const float v = Y[i * cols + j] + B[j];
            O[i * cols + j] = (v > 0.0f ? v : 0.0f) * s;
        }
    return out;
}
"""

tail = load_inline(name="kforge_cpu_bias_relu_scale", cpp_sources=tail_source,
                   functions=["bias_relu_scale"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = torch.mm(x, self.linear.weight.t())
        return tail.bias_relu_scale(y.contiguous(), self.linear.bias, self.scale)
