"""A long fp32 reduction of non-negative inputs (KernelBench level1/6's trouble in small): each
row of torch.rand values summed. Summed in another order the result stays within 1e-4 of the
reference for these inputs; with values of both signs it would cancel and no order would."""
import torch
import torch.nn as nn

rows = 256
length = 1 << 17


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=-1)


def get_inputs():
    return [torch.rand(rows, length)]


def get_init_inputs():
    return []
