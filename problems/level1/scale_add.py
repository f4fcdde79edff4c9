"""Scaled elementwise sum: alpha * x + beta * y."""
import torch
import torch.nn as nn

batch_size = 128
dim = 16384
alpha = 0.75
beta = -1.5
# Other sizes this problem is valid for: kforge runs one extra correctness trial on each.
KFORGE_SHAPE_VARIANTS = [{"batch_size": 100, "dim": 10000}]


class Model(nn.Module):
    def __init__(self, alpha, beta):
        super().__init__()
        self.alpha = alpha
        self.beta = beta

    def forward(self, x, y):
        return self.alpha * x + self.beta * y


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [alpha, beta]
