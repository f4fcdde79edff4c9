"""GELU with the tanh approximation, elementwise."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
dim = 16384
# Other sizes this problem is valid for: kforge runs one extra correctness trial on each.
KFORGE_SHAPE_VARIANTS = [{"batch_size": 100, "dim": 10000}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
