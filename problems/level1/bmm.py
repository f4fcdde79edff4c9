"""Batched matrix multiplication of two 3D tensors."""
import torch
import torch.nn as nn

batch_size = 8
M = 128
K = 128
N = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(batch_size, K, N)]


def get_init_inputs():
    return []
