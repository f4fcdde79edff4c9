"""Reverse cumulative sum along a dimension: each element plus every element after it."""
import torch
import torch.nn as nn

batch_size = 1024
length = 512
# Other sizes this problem is valid for: kforge runs one extra correctness trial on each.
KFORGE_SHAPE_VARIANTS = [{"batch_size": 300, "length": 500}]


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return [1]
