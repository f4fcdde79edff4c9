"""The parity of whole numbers held in a float tensor (class labels, counts): every input the
problem can produce has whole values, so a kernel may convert them to integers."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.remainder(x, 2)


def get_inputs():
    return [torch.randint(0, 1000, (1 << 16,)).float()]


def get_init_inputs():
    return []
