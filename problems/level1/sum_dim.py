"""Sum reduction over the middle dimension of a 3D tensor."""
import torch
import torch.nn as nn

batch_size = 64
reduce_dim = 1024
inner_dim = 64
# Other sizes this problem is valid for: kforge runs one extra correctness trial on each.
KFORGE_SHAPE_VARIANTS = [{"batch_size": 40, "reduce_dim": 700, "inner_dim": 48}]


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, reduce_dim, inner_dim)]


def get_init_inputs():
    return [1]
