"""Matmul of two lower-triangular matrices (KernelBench level1/15's form): the inputs are made
with torch.tril, so every input the problem can produce is zero above the diagonal, and a
kernel may skip those terms."""
import torch
import torch.nn as nn

N = 192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.tril(torch.matmul(A, B))


def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [torch.tril(A), torch.tril(B)]


def get_init_inputs():
    return []
