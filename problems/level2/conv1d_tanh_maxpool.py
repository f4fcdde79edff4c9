"""Conv1d (kernel 3, padding 1), tanh, then 1D max pooling with window 2."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 32
out_channels = 64
length = 1024
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool1d(2)

    def forward(self, x):
        return self.pool(torch.tanh(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
