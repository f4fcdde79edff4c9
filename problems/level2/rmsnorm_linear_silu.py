"""RMSNorm, then a Linear layer without bias, then SiLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_features = 512
out_features = 256
eps = 1e-6


class Model(nn.Module):
    def __init__(self, in_features, out_features, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(in_features))
        self.linear = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x):
        x = x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + self.eps) * self.weight
        return F.silu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, eps]
