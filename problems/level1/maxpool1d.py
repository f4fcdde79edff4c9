"""1D max pooling with stride, padding and dilation (nn.MaxPool1d, no indices returned)."""
import torch
import torch.nn as nn

batch_size = 16
channels = 32
length = 4096
kernel_size = 5
stride = 2
padding = 2
dilation = 2
# Other sizes this problem is valid for: kforge runs one extra correctness trial on each.
KFORGE_SHAPE_VARIANTS = [{"batch_size": 10, "channels": 24, "length": 3001}]


class Model(nn.Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation,
                                 return_indices=return_indices)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation, False]
