# kforge-problem: level1/layernorm.py
# kforge-problem-kb: level1/40_LayerNorm.py
# kforge-expect: ok
# LayerNorm over a few very long rows. KernelBench's 40_LayerNorm normalises 16 rows of
# 64*256*256 = 4M values; eager runs one thread block per row, so 16 of the GPU's SMs stream
# its 768 MB (each row read twice, written once) while the rest wait. Here every row is cut
# into chunks of up to 16K values and each (row, chunk) is a program of its own, 4096 of them
# at that size, in two kernels: the first writes each chunk's sum and sum of squares, both
# taken around the row's first value so the variance does not cancel; the second adds up its
# row's partials and normalises its chunk with the weight and bias. The same two reads and one
# write as eager, on every SM. Row is the fastest grid axis, so the rows' visits to one chunk
# of weight and bias run together and find it in L2.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def chunk_sums_kernel(x_ptr, part_ptr, n_cols, stride_x, stride_part, n_chunks,
                      CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    x_row = x_ptr + row * stride_x
    shift = tl.load(x_row)
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    squares = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(chunk * CHUNK, chunk * CHUNK + CHUNK, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        d = tl.where(mask, tl.load(x_row + cols, mask=mask, other=0.0) - shift, 0.0)
        total += d
        squares += d * d
    slot = part_ptr + row * n_chunks + chunk
    tl.store(slot, tl.sum(total, axis=0))
    tl.store(slot + stride_part, tl.sum(squares, axis=0))


@triton.jit
def normalize_kernel(x_ptr, w_ptr, b_ptr, part_ptr, y_ptr, n_cols, stride_x, stride_y,
                     stride_part, n_chunks, eps, CHUNK: tl.constexpr, BLOCK: tl.constexpr,
                     PARTS: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    total = tl.zeros((PARTS,), dtype=tl.float32)
    squares = tl.zeros((PARTS,), dtype=tl.float32)
    for p0 in range(0, n_chunks, PARTS):
        p = p0 + tl.arange(0, PARTS)
        slot = part_ptr + row * n_chunks + p
        total += tl.load(slot, mask=p < n_chunks, other=0.0)
        squares += tl.load(slot + stride_part, mask=p < n_chunks, other=0.0)
    x_row = x_ptr + row * stride_x
    mean_d = tl.sum(total, axis=0) / n_cols
    var = tl.maximum(tl.sum(squares, axis=0) / n_cols - mean_d * mean_d, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    mean = tl.load(x_row) + mean_d
    for c0 in range(chunk * CHUNK, chunk * CHUNK + CHUNK, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * stride_y + cols, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.norm = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        w = self.norm.weight.contiguous()
        b = self.norm.bias.contiguous()
        n_cols = w.numel()
        x2 = x.contiguous().view(-1, n_cols)
        rows = x2.shape[0]
        y = torch.empty_like(x2)
        block = min(2048, triton.next_power_of_2(n_cols))
        chunk = min(16384, triton.next_power_of_2(n_cols))
        n_chunks = triton.cdiv(n_cols, chunk)
        part = torch.empty((2, rows, n_chunks), device=x.device, dtype=torch.float32)
        grid = (rows, n_chunks)
        chunk_sums_kernel[grid](x2, part, n_cols, x2.stride(0), part.stride(0), n_chunks,
                                CHUNK=chunk, BLOCK=block, num_warps=8)
        normalize_kernel[grid](x2, w, b, part, y, n_cols, x2.stride(0), y.stride(0),
                               part.stride(0), n_chunks, self.norm.eps, CHUNK=chunk, BLOCK=block,
                               PARTS=min(1024, max(16, triton.next_power_of_2(n_chunks))),
                               num_warps=8)
        return y.view(x.shape)
