"""Linear layer (GEMM + bias), then ReLU, then multiplication by a constant scale."""
import torch
import torch.nn as nn

batch_size = 128
in_features = 256
out_features = 512
scale = 2.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        y = self.linear(x)
        y = torch.relu(y)
        return y * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
