"""relu (level 1, fp16), synthesized by kforge synth."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 128
depth = 32
height = 32
width = 32
dtype = torch.float16
# Other sizes this problem is valid for: kforge runs one extra correctness trial on each.
KFORGE_SHAPE_VARIANTS = [{"channels": 159, "depth": 41, "height": 15}, {"batch_size": 23, "depth": 39, "height": 23}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    x = torch.randn(batch_size, channels, depth, height, width, dtype=dtype)
    return [x]


def get_init_inputs():
    return []
