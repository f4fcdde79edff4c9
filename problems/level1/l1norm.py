"""Each row divided by the mean of its absolute values (an L1 normalisation over dim 1)."""
import torch
import torch.nn as nn

batch_size = 512
dim = 4096
# Other sizes this problem is valid for: kforge runs one extra correctness trial on each.
KFORGE_SHAPE_VARIANTS = [{"batch_size": 100, "dim": 3000}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.mean(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
