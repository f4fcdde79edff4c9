"""Matmul of two symmetric matrices (KernelBench level1/13's form): every input the problem can
produce is equal to its transpose, so a kernel may read a column where the row is asked for."""
import torch
import torch.nn as nn

N = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [(A + A.T) / 2, (B + B.T) / 2]


def get_init_inputs():
    return []
