"""CPU candidates for the data fixtures: two correct ReLU kernels of different structure, a
renamed copy of one (the same solution), broken ones, and a softmax pair."""
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


RELU = _read("examples/cpu/relu.py")
INCLUDE = "#include <torch/extension.h>\n"
GOOD_RETURN = "return relu_ext.relu_forward(x.contiguous())"
assert INCLUDE in RELU and GOOD_RETURN in RELU
# Stops the compiler at once: a header that does not exist.
RELU_NO_COMPILE = RELU.replace(INCLUDE, '#include "relu_helpers.h"\n' + INCLUDE, 1)
# The same kernel (one compile), a flattened result: incorrect.
RELU_WRONG = RELU.replace(GOOD_RETURN, GOOD_RETURN + ".view(-1)")
# The same solution with every name changed: MinHash must see one kernel.
RELU_RENAMED = (RELU.replace("relu_source", "kernel_code").replace("relu_ext", "my_module")
                .replace("kforge_cpu_relu", "renamed_relu_ext").replace("const float v", "const float val")
                .replace("v > 0.0f ? v", "val > 0.0f ? val").replace("in[i]", "src[i]")
                .replace("const float* in", "const float* src").replace("out[i]", "dst[i]")
                .replace("float* out", "float* dst"))
assert RELU_RENAMED != RELU

RELU_UNROLLED = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <algorithm>

torch::Tensor relu4(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat && x.is_contiguous(),
                "a contiguous float32 CPU tensor");
    auto y = torch::empty_like(x);
    const float* a = x.data_ptr<float>();
    float* b = y.data_ptr<float>();
    const int64_t n = x.numel();
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        b[i] = std::max(a[i], 0.0f);
        b[i + 1] = std::max(a[i + 1], 0.0f);
        b[i + 2] = std::max(a[i + 2], 0.0f);
        b[i + 3] = std::max(a[i + 3], 0.0f);
    }
    for (; i < n; ++i) {
        b[i] = std::max(a[i], 0.0f);
    }
    return y;
}
"""

ext = load_inline(name="kforge_cpu_relu_unrolled", cpp_sources=source, functions=["relu4"],
                  extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu4(x.contiguous())
'''

SOFTMAX = _read("examples/cpu/softmax.py")
SOFTMAX_RETURN = "return softmax_ext.softmax_forward(x.contiguous())"
assert SOFTMAX_RETURN in SOFTMAX
SOFTMAX_WRONG = SOFTMAX.replace(SOFTMAX_RETURN, SOFTMAX_RETURN + ".view(-1)")
