"""Conv2d (3x3, padding 1), ReLU, multiply by a constant, add a per-channel bias."""
import torch
import torch.nn as nn

batch_size = 8
in_channels = 16
out_channels = 32
height = 32
width = 32
kernel_size = 3
scale = 0.5


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.scale = scale
        self.shift = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        y = self.conv(x)
        y = torch.relu(y)
        return y * self.scale + self.shift


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale]
