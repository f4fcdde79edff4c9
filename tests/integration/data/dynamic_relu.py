# The source is computed by a function, so static analysis cannot resolve it: the build is
# requested by the candidate process at run time. It is the same code as same_name_relu.py, so
# it must be found in the cache under the same key.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


def make_source(fallback):
    body = ("    for (int64_t i = 0, n = xc.numel(); i < n; ++i) "
            "out[i] = in[i] > 0.0f ? in[i] : %s;\n" % fallback)
    return ("\n#include <torch/extension.h>\n"
            "torch::Tensor forward(torch::Tensor x) {\n"
            "    auto xc = x.contiguous();\n"
            "    auto y = torch::empty_like(xc);\n"
            "    const float* in = xc.data_ptr<float>();\n"
            "    float* out = y.data_ptr<float>();\n" + body + "    return y;\n}\n")


ext = load_inline(name="elementwise_add", cpp_sources=make_source("0.0f"), functions=["forward"],
                  extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.forward(x)
