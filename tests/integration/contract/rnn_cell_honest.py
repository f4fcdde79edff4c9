# kforge-problem: rnn_cell_state.py
# kforge-expect: ok
# Honest: one step of the cell in C++, the new hidden state kept where the problem keeps it.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>

// One step: h' = tanh(W_ih [x, h] + b_ih) (h taken as zeros unless use_state), y = W_ho h' + b_ho.
std::vector<torch::Tensor> rnn_step(torch::Tensor x, torch::Tensor h, torch::Tensor w_ih,
                                    torch::Tensor b_ih, torch::Tensor w_ho, torch::Tensor b_ho,
                                    bool use_state) {
    x = x.contiguous(); h = h.contiguous();
    w_ih = w_ih.contiguous(); w_ho = w_ho.contiguous();
    const int64_t B = x.size(0), I = x.size(1), H = h.size(1), O = w_ho.size(0);
    auto hn = torch::empty({B, H}, x.options());
    auto y = torch::empty({B, O}, x.options());
    const float *px = x.data_ptr<float>(), *ph = h.data_ptr<float>();
    const float *wi = w_ih.data_ptr<float>(), *bi = b_ih.data_ptr<float>();
    const float *wo = w_ho.data_ptr<float>(), *bo = b_ho.data_ptr<float>();
    float *phn = hn.data_ptr<float>(), *py = y.data_ptr<float>();
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t j = 0; j < H; ++j) {
            const float* w = wi + j * (I + H);
            float acc = bi[j];
            for (int64_t k = 0; k < I; ++k) acc += w[k] * px[b * I + k];
            if (use_state)
                for (int64_t k = 0; k < H; ++k) acc += w[I + k] * ph[b * H + k];
            phn[b * H + j] = std::tanh(acc);
        }
        for (int64_t o = 0; o < O; ++o) {
            float acc = bo[o];
            for (int64_t j = 0; j < H; ++j) acc += wo[o * H + j] * phn[b * H + j];
            py[b * O + o] = acc;
        }
    }
    return {y, hn};
}
"""

ext = load_inline(name="kforge_contract_rnn_step", cpp_sources=source, functions=["rnn_step"],
                  extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        # Built in the problem's order, so the same seed gives the same state and weights.
        self.hidden = torch.randn(batch_size, hidden_size)
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        y, self.hidden = ext.rnn_step(x, self.hidden, self.i2h.weight, self.i2h.bias,
                                      self.h2o.weight, self.h2o.bias, True)
        return y
