"""ResNet basic block without normalisation: conv3x3-ReLU-conv3x3, identity residual, ReLU."""
import torch
import torch.nn as nn

batch_size = 8
channels = 32
height = 32
width = 32


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.conv1(x))
        y = self.conv2(y)
        return torch.relu(y + x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
