"""Maximum values over the last dimension of a 2D tensor."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 1024
# Other sizes this problem is valid for: kforge runs one extra correctness trial on each.
KFORGE_SHAPE_VARIANTS = [{"batch_size": 1000, "dim": 777}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.max(x, dim=-1).values


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
