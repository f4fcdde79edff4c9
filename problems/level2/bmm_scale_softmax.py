"""Attention scores: batched Q @ K^T, scaled by 1/sqrt(d), softmax over the last dim."""
import math
import torch
import torch.nn as nn

batch_size = 16
seq_len = 128
head_dim = 64


class Model(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q, k):
        s = torch.bmm(q, k.transpose(1, 2)) * self.scale
        return torch.softmax(s, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, seq_len, head_dim), torch.randn(batch_size, seq_len, head_dim)]


def get_init_inputs():
    return [head_dim]
