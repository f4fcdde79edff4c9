# kforge-problem: level3/mlp_block.py
# kforge-expect: ok
# Honest CPU candidate: the whole three-layer MLP in one C++ call, bias and ReLU fused per layer.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mlp_source = r"""
#include <torch/extension.h>
#include <vector>

// y[M,N] = act(x[M,K] @ w[N,K]^T + b[N])
static void linear_layer(const float* x, const float* w, const float* b, float* y,
                         int64_t M, int64_t K, int64_t N, bool relu) {
    std::vector<float> wt(static_cast<size_t>(K * N));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) wt[k * N + n] = w[n * K + k];
    for (int64_t i = 0; i < M; ++i) {
        float* __restrict__ yr = y + i * N;
        const float* xr = x + i * K;
        for (int64_t n = 0; n < N; ++n) yr[n] = 0.0f;
        for (int64_t k = 0; k < K; ++k) {
            const float xv = xr[k];
            const float* __restrict__ wr = wt.data() + k * N;
            for (int64_t n = 0; n < N; ++n) yr[n] += xv * wr[n];
        }
        for (int64_t n = 0; n < N; ++n) {
            const float v = yr[n] + b[n];
            yr[n] = relu ? (v > 0.0f ? v : 0.0f) : v;
        }
    }
}

static void check(const torch::Tensor& t, const char* what) {
    TORCH_CHECK(t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.is_contiguous(), what,
                " must be a contiguous CPU float32 tensor");
}

torch::Tensor mlp_forward(torch::Tensor x, torch::Tensor w1, torch::Tensor b1, torch::Tensor w2,
                          torch::Tensor b2, torch::Tensor w3, torch::Tensor b3) {
    check(x, "x"); check(w1, "w1"); check(b1, "b1"); check(w2, "w2"); check(b2, "b2");
    check(w3, "w3"); check(b3, "b3");
    const int64_t M = x.size(0), K = x.size(1);
    const int64_t H1 = w1.size(0), H2 = w2.size(0), O = w3.size(0);
    TORCH_CHECK(w1.size(1) == K && w2.size(1) == H1 && w3.size(1) == H2, "shape mismatch");
    std::vector<float> h1(static_cast<size_t>(M * H1)), h2(static_cast<size_t>(M * H2));
    auto y = torch::empty({M, O}, x.options());
    linear_layer(x.data_ptr<float>(), w1.data_ptr<float>(), b1.data_ptr<float>(), h1.data(), M, K, H1, true);
    linear_layer(h1.data(), w2.data_ptr<float>(), b2.data_ptr<float>(), h2.data(), M, H1, H2, true);
    linear_layer(h2.data(), w3.data_ptr<float>(), b3.data_ptr<float>(), y.data_ptr<float>(), M, H2, O, false);
    return y;
}
"""

mlp_ext = load_inline(
    name="kforge_cpu_mlp_block",
    cpp_sources=mlp_source,
    functions=["mlp_forward"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, out_features)

    def forward(self, x):
        return mlp_ext.mlp_forward(
            x.contiguous(),
            self.fc1.weight, self.fc1.bias,
            self.fc2.weight, self.fc2.bias,
            self.fc3.weight, self.fc3.bias,
        )
