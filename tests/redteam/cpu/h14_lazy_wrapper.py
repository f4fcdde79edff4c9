# kforge-problem: level1/relu.py
# kforge-expect: cheat
# kforge-rule: H14
# returns a placeholder with __torch_function__ that runs the kernel only when compared
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>

torch::Tensor relu_forward(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat && x.is_contiguous(), "float32 contiguous x");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return y;
}
"""

relu_ext = load_inline(
    name="kforge_rt_relu",
    cpp_sources=relu_source,
    functions=["relu_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class _Lazy:
    def __init__(self, x):
        self._x = x
        self._y = None
        self.shape = x.shape
        self.dtype = x.dtype
        self.device = x.device

    def _get(self):
        if self._y is None:
            self._y = relu_ext.relu_forward(self._x)
        return self._y

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        args = [a._get() if isinstance(a, _Lazy) else a for a in args]
        return func(*args, **(kwargs or {}))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _Lazy(x)
