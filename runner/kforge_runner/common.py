"""Small pieces shared by the judge and the candidate host."""
import importlib.machinery
import importlib.util
import os
import sys


def parse_fd():
    return int(sys.argv[sys.argv.index("--fd") + 1])


def load_extension(path, module_name):
    """Import a compiled extension module from an exact file (never by search path)."""
    loader = importlib.machinery.ExtensionFileLoader(module_name, path)
    spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return named(module, module_name)


def named(module, name):
    """`module` under the extension name it was imported by: cached bindings compiled for
    another extension (bindings.py) made it under that one's name."""
    if getattr(module, "__name__", name) != name:
        module.__name__ = name
    return module


def as_list(out):
    """A forward's result as a list of values (a tensor, a tuple or a list of them)."""
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


def on_device(device):
    """A context in which torch's factory functions allocate on `device` (torch >= 2.0), so a
    problem's get_inputs() makes its tensors where they are used: a GPU-sized input drawn on the
    CPU and copied over costs seconds (half-precision randn on the CPU most). A null context on
    an older torch."""
    import contextlib
    import torch
    d = torch.device(device)
    return d if hasattr(d, "__enter__") else contextlib.nullcontext()


def device_sync(device):
    import torch
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def redirect_output(path):
    """Send this process's stdout and stderr to a file: the channel is the only voice."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


# ---- fresh inputs for every timed call (H06) ------------------------------------------------
# Before each timed call its floating-point inputs are rewritten as base * noise, the noise a
# window into a secret per-slot tensor of factors in (1 - EPS, 1] at an offset drawn from the
# call's index. Every element changes (so no checksum, pointer or sample of values repeats),
# signs, zeros and [0, 1] ranges are kept, and it costs one multiply: no random numbers per call.
# The judge rebuilds the same inputs from its own pristine copy to check the timed outputs.
# An input of more than PERTURB_PERIOD elements is rewritten in rows of that many, all with the
# same window: the noise then takes PERTURB_PERIOD elements, not one per input element (a
# multi-GiB input would otherwise need as much again for its noise).
# The rewrite stays inside the input's contract (contract.py), read off the base input itself
# (the same pristine values on both sides, so both choose alike), and exactly: a symmetric
# input is multiplied by the symmetric u_i * u_j (a product that commutes), one sorted along
# its last dim by a factor per row (a positive factor keeps the order, rounding too), one whose
# rows sum to 1 has each row rotated by a call's shift (the same values, so the same sums;
# with zeros in it, not rewritten: the zeros would move), one of whole values is not rewritten
# (a factor would make them fractions).
PERTURB_EPS = 1.0 / 64
PERTURB_SPAN = 1 << 16
PERTURB_PERIOD = 1 << 22


def _mix(*values):
    """A 63-bit hash of integers (splitmix64 steps); identical in the judge and the candidate."""
    x = 0x9E3779B97F4A7C15
    for v in values:
        x = (x ^ (int(v) & 0xFFFFFFFFFFFFFFFF)) & 0xFFFFFFFFFFFFFFFF
        x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 31
    return x >> 1


def perturb_mode(x):
    """How a floating input is rewritten for timed calls, from its own values (contract.py's
    facts of one draw): "skip" (whole values; rows summing to 1 with zeros among them), "roll"
    (rows of non-negative values summing to 1), "scale" (symmetric and sorted: one factor),
    "symmetric" (u_i * u_j), "sorted" (a factor per row of the last dim) or "elements"."""
    from . import contract
    f = contract.facts_of([x])[0]
    if f.empty:
        return "elements"
    if f.integral:
        return "skip"
    if f.row_sum_one:
        return "skip" if bool(f.zeros.any()) else "roll"
    ordered = f.ascending or f.descending
    if f.symmetric:
        return "scale" if ordered else "symmetric"
    return "sorted" if ordered else "elements"


class Perturber:
    """Rewrites one input set before each timed call; see the comment above."""

    def __init__(self, base, seed):
        import torch
        self.base = base
        self.seed = int(seed)
        self.noise = []
        self.modes = []
        self.outer = {}  # j -> a (d, d) buffer for a symmetric input's u_i * u_j
        for j, x in enumerate(base):
            mode = None
            if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() > 0:
                mode = perturb_mode(x)
            self.modes.append(mode)
            if mode in (None, "skip", "roll"):  # a roll takes its shift from _mix alone
                self.noise.append(None)
                continue
            last = x.shape[-1] if x.dim() else 1
            n = {"symmetric": last, "scale": 1, "sorted": x.numel() // last}.get(mode, x.numel())
            g = torch.Generator(device=x.device)
            g.manual_seed(_mix(self.seed, j))
            u = torch.rand(min(n, PERTURB_PERIOD) + PERTURB_SPAN, generator=g,
                           device=x.device, dtype=torch.float32)
            # u_i * u_j must stay in (1 - EPS, 1] too: each factor in (1 - EPS/2, 1].
            eps = PERTURB_EPS / 2 if mode == "symmetric" else PERTURB_EPS
            self.noise.append((1.0 - eps * u).to(x.dtype))
            if mode == "symmetric":
                self.outer[j] = torch.empty(last, last, dtype=x.dtype, device=x.device)

    def _window(self, j, index, n):
        off = _mix(self.seed, index, j) % PERTURB_SPAN
        return self.noise[j][off:off + n]

    @staticmethod
    def _mul_rows(src, dst, w):
        """dst = src * one factor a row: src and dst (n, k), w repeated every len(w) rows."""
        import torch
        (n, k), p = src.shape, w.numel()
        if n <= p:
            torch.mul(src, w[:n].view(n, 1), out=dst)
            return
        rows = n // p
        full = rows * p
        torch.mul(src[:full].view(rows, p, k), w.view(1, p, 1), out=dst[:full].view(rows, p, k))
        if full < n:
            torch.mul(src[full:], w[:n - full].view(-1, 1), out=dst[full:])

    def _rewrite(self, j, index, out):
        """out = base[j] rewritten for call `index` (out has base[j]'s shape)."""
        import torch
        x, mode = self.base[j], self.modes[j]
        if mode == "roll":
            last = x.shape[-1]
            shift = 1 + _mix(self.seed, index, j) % (last - 1) if last > 1 else 0
            out.copy_(torch.roll(x, shift, -1))
            return
        if mode == "symmetric":
            d = x.shape[-1]
            u = self._window(j, index, d)
            f = self.outer[j]
            torch.outer(u, u, out=f)
            torch.mul(x, f, out=out)
            return
        if mode == "scale":
            torch.mul(x, self._window(j, index, 1), out=out)
            return
        # A factor per row of the last dim (sorted), or per element (a row of one).
        k = x.shape[-1] if mode == "sorted" else 1
        rows = x.numel() // k
        self._mul_rows(x.reshape(rows, k), out.view(rows, k),
                       self._window(j, index, min(rows, PERTURB_PERIOD)))

    def _rewrites(self, j):
        return self.modes[j] not in (None, "skip")

    def apply(self, bufs, index):
        """Writes the inputs of timed call `index` into bufs (the shared buffers)."""
        for j in range(len(self.base)):
            if self._rewrites(j):
                self._rewrite(j, index, bufs[j])

    def inputs(self, index, in_place=False):
        """The inputs of timed call `index`: new tensors, or with `in_place` the base tensors
        themselves rewritten where they are contiguous (the base is then used up: no copy of a
        multi-GiB input)."""
        import torch
        out = []
        for j, x in enumerate(self.base):
            if not self._rewrites(j):
                out.append(x)
                continue
            if in_place and x.is_contiguous():
                y = x
            else:
                y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            self._rewrite(j, index, y)
            out.append(y)
        return out
