"""RMSNorm over the channels of an NCHW tensor, no weight: x / sqrt(mean(x^2 over C) + eps)."""
import torch
import torch.nn as nn

batch_size = 16
features = 32
dim1 = 64
dim2 = 64
# Other sizes this problem is valid for: kforge runs one extra correctness trial on each.
KFORGE_SHAPE_VARIANTS = [{"batch_size": 5, "features": 24, "dim1": 40, "dim2": 50}]


class Model(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x):
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
