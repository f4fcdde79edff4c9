"""Pre-LayerNorm transformer block: multi-head self-attention and a GELU MLP, each with a residual."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 128
d_model = 64
n_heads = 4
mlp_ratio = 4


class Model(nn.Module):
    def __init__(self, d_model, n_heads, mlp_ratio):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, mlp_ratio * d_model)
        self.fc2 = nn.Linear(mlp_ratio * d_model, d_model)

    def forward(self, x):
        b, s, d = x.shape
        h = self.n_heads
        hd = d // h
        qkv = self.qkv(self.ln1(x)).view(b, s, 3, h, hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(hd), dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(y)
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return x


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, n_heads, mlp_ratio]
