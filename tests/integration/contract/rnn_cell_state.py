"""A recurrent cell whose hidden state lives in the model and advances with every call, as in
KernelBench v0's 33_VanillaRNN: a call's output depends on the calls before it. The judge calls
its reference more often than the candidate calls ModelNew, so kforge starts every call of both
from the state they were built with (runner/kforge_runner/state.py)."""
import torch
import torch.nn as nn

batch_size = 4
input_size = 64
hidden_size = 32
output_size = 16


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden = torch.randn(batch_size, hidden_size)
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        self.hidden = self.hidden.to(x.device)
        self.hidden = torch.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))
        return self.h2o(self.hidden)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
