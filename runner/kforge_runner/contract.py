"""A problem's input contract: the invariants every draw of its get_inputs() satisfies.

The judge's perturbed trials (signed inputs, swapped values) must stay inside the set of inputs
the problem can produce: a kernel correct on every input of that set is correct, and a trial
outside it proves nothing (docs/PROTOCOL.md, "correctness"). The contract is inferred from a few
seeded draws of get_inputs() (the judge: 4, `kforge lint-problems`: its --draws); a property
holds only if it holds in every draw. Per input tensor (by position):

    nonnegative   every element >= 0 (the signed trial keeps this input's own draw)
    unit          every element in [0, 1] (`unit_open`: in [0, 1), as torch.rand draws)
    integral      integer values: an integer or bool dtype, or a float whose values are whole
    range         integer dtypes: the smallest and largest value seen (class targets, indices)
    zero_mask     the same positions are zero in every draw, and no others; `triangular` names
                  the mask when it is the part above ("lower") or below ("upper") the diagonal of
                  the last two dims. Perturbations keep zeros zero and non-zeros non-zero
    symmetric     square in its last two dims and equal to its transpose
    row_sum_one   non-negative rows (last dim) summing to 1 (softmax outputs, probabilities)
    sorted        non-decreasing ("ascending") or non-increasing ("descending") along the last dim

Large tensors are checked on a bounded sample (SAMPLE_ELEMENTS elements of whole rows of the
last dim, from a few leading slices; a longer row is cut to its first SAMPLE_ELEMENTS values and
then no row sum is inferred), the same positions in every draw, so inference costs little
memory and time whatever the problem's sizes. Non-tensor inputs have no contract.
"""
import torch

SAMPLE_ELEMENTS = 1 << 21  # elements looked at per tensor and draw (whole rows of the last dim)
ROW_SUM_TOL = 1e-3


def _plane(x):
    """x as (batch, rows, cols): the last two dims, leading dims flattened."""
    if x.dim() == 0:
        return x.reshape(1, 1, 1)
    if x.dim() == 1:
        return x.reshape(1, 1, -1)
    return x.reshape(-1, x.shape[-2], x.shape[-1])


def _pick(n, k):
    """Up to k indices of range(n), spread evenly (first and last included): deterministic, so
    every draw is looked at in the same places."""
    if n <= k:
        return torch.arange(n)
    return torch.linspace(0, n - 1, k).round().long().unique()


def sample(x):
    """A bounded sample of x: (values (b, r, cols), the rows' indices, the batches' indices).
    Rows longer than SAMPLE_ELEMENTS are cut to their first SAMPLE_ELEMENTS columns (see
    partial_rows)."""
    p = _plane(x)
    if p.shape[2] > SAMPLE_ELEMENTS:
        p = p[:, :, :SAMPLE_ELEMENTS]
    b, r, c = p.shape
    per_row = max(c, 1)
    rows_budget = max(SAMPLE_ELEMENTS // per_row, 1)
    bsel = _pick(b, min(b, 4, max(rows_budget, 1)))
    rsel = _pick(r, max(rows_budget // max(len(bsel), 1), 1))
    dev = x.device
    # One gather of the chosen rows of the chosen slices: index_select on the slices first
    # would copy each chosen slice whole (the whole input when it is one matrix).
    sub = p[bsel.to(dev).view(-1, 1), rsel.to(dev).view(1, -1)]
    return sub, rsel, bsel


class _Facts:
    """What one draw of one tensor shows (on its sample)."""

    def __init__(self, x):
        self.dtype = x.dtype
        self.shape = tuple(x.shape)
        self.is_float = x.is_floating_point()
        self.is_int = not self.is_float and not x.is_complex()
        sub, rsel, bsel = sample(x)
        s = sub.double() if (self.is_float or self.is_int) and sub.dtype != torch.bool else sub
        n = sub.numel()
        self.empty = n == 0
        if self.empty or x.is_complex():
            return
        if sub.dtype == torch.bool:
            s = sub.to(torch.int64)
        finite = bool(torch.isfinite(s).all()) if self.is_float else True
        self.finite = finite
        self.min = float(s.min())
        self.max = float(s.max())
        self.integral = self.is_int or (finite and bool((s == s.round()).all()))
        self.zeros = (sub == 0)
        b, r, c = sub.shape
        cols = torch.arange(c, device=sub.device).view(1, 1, c)
        rows = rsel.to(sub.device).view(1, -1, 1)
        above = cols > rows
        below = cols < rows
        square = x.dim() >= 2 and x.shape[-1] == x.shape[-2] and x.shape[-1] > 1
        self.lower = square and bool((sub[above.expand_as(sub)] == 0).all()) \
            and bool((sub[(~above).expand_as(sub)] != 0).any())
        self.upper = square and bool((sub[below.expand_as(sub)] == 0).all()) \
            and bool((sub[(~below).expand_as(sub)] != 0).any())
        self.symmetric = False
        if square:
            # The columns of the sampled rows, gathered alone (not the chosen slices whole).
            dev = x.device
            cols_of_rows = _plane(x)[bsel.to(dev).view(-1, 1, 1),
                                     torch.arange(x.shape[-2], device=dev).view(1, -1, 1),
                                     rsel.to(dev).view(1, 1, -1)].transpose(1, 2)
            self.symmetric = bool(torch.equal(sub, cols_of_rows))
        self.row_sum_one = False
        self.ascending = self.descending = False
        if c >= 2:
            if self.is_float and finite and self.min >= 0 and x.shape[-1] <= SAMPLE_ELEMENTS:
                self.row_sum_one = bool(((s.sum(-1) - 1).abs() <= ROW_SUM_TOL).all())
            d = s[..., 1:] - s[..., :-1]
            self.ascending = bool((d >= 0).all())
            self.descending = bool((d <= 0).all())


def facts_of(inputs):
    """What one draw shows, per input (small: only samples are kept, so a caller may free the
    draw before making the next)."""
    return [_Facts(x) if isinstance(x, torch.Tensor) else None for x in inputs]


def infer_from(facts_per_draw):
    """The contract from several draws' facts: one dict per input position, or None for a
    non-tensor input (or one whose shape or dtype changes between draws)."""
    out = []
    if not facts_per_draw:
        return out
    for i in range(len(facts_per_draw[0])):
        fs = [d[i] if i < len(d) else None for d in facts_per_draw]
        if any(f is None for f in fs) or len({(f.shape, f.dtype) for f in fs}) != 1:
            out.append(None)
            continue
        out.append(infer_tensor(fs))
    return out


def infer(draws):
    """The contract of a problem's inputs from several draws (lists of get_inputs() values)."""
    return infer_from([facts_of(d) for d in draws])


def infer_tensor(facts):
    f0 = facts[0]
    c = {"dtype": str(f0.dtype).replace("torch.", ""), "shape": list(f0.shape)}
    if f0.empty or f0.dtype.is_complex:
        return c
    finite = all(f.finite for f in facts)
    lo, hi = min(f.min for f in facts), max(f.max for f in facts)
    if lo >= 0:
        c["nonnegative"] = True
    if f0.is_float and finite and lo >= 0 and hi <= 1:
        c["unit"] = True
        if hi < 1:
            c["unit_open"] = True
    if all(f.integral for f in facts):
        c["integral"] = True
    if f0.is_int:
        c["range"] = [int(lo), int(hi)]
    # A fixed zero pattern: the very same zeros in every draw (a chance zero, as relu of random
    # values makes, moves between draws), at least one of them, and not everything zero... an
    # all-zero input (a fresh state) is a fixed pattern too, kept as it is.
    z0 = f0.zeros
    if len(facts) >= 2 and bool(z0.any()) and all(torch.equal(f.zeros, z0) for f in facts[1:]) \
            and not (f0.is_int or f0.dtype == torch.bool):
        c["zero_mask"] = True
        if all(f.lower for f in facts):
            c["triangular"] = "lower"
        elif all(f.upper for f in facts):
            c["triangular"] = "upper"
    if all(f.symmetric for f in facts):
        c["symmetric"] = True
    if all(f.row_sum_one for f in facts):
        c["row_sum_one"] = True
    if all(f.ascending for f in facts) and not all(f.descending for f in facts):
        c["sorted"] = "ascending"
    elif all(f.descending for f in facts) and not all(f.ascending for f in facts):
        c["sorted"] = "descending"
    return c


def describe(c):
    """One line for a tensor's contract: `float32 [64, 64]: lower-triangular, non-negative`."""
    if c is None:
        return "not a tensor (passed as drawn)"
    parts = []
    if c.get("triangular"):
        parts.append("%s-triangular" % c["triangular"])
    elif c.get("zero_mask"):
        parts.append("fixed zero pattern")
    if c.get("symmetric"):
        parts.append("symmetric")
    if c.get("row_sum_one"):
        parts.append("rows sum to 1")
    if c.get("sorted"):
        parts.append("sorted %s" % c["sorted"])
    if c.get("unit"):
        parts.append("in [0, 1)" if c.get("unit_open") else "in [0, 1]")
    elif c.get("nonnegative"):
        parts.append("non-negative")
    if c.get("integral") and not c.get("range"):
        parts.append("integral values")
    if c.get("range"):
        parts.append("integers in [%d, %d]" % tuple(c["range"]))
    return "%s %s: %s" % (c["dtype"], c["shape"], ", ".join(parts) if parts else "unconstrained")


def outside(c, x, base=None):
    """The invariants of contract `c` (one input's dict) that tensor `x` breaks, as names
    (empty: x is inside). `base` is the draw x was made from, or its facts_of entry, for the
    zero pattern (the contract says there is one; the draw says where). Looked at on the same
    bounded sample as inference, so a trial is judged by what the contract could have seen."""
    if c is None or not isinstance(x, torch.Tensor):
        return []
    if list(x.shape) != list(c["shape"]) or str(x.dtype).replace("torch.", "") != c["dtype"]:
        return ["shape and dtype"]
    f = _Facts(x)
    if f.empty or x.is_complex():
        return []
    out = []
    if not f.is_float or f.finite:
        if c.get("nonnegative") and f.min < 0:
            out.append("non-negative")
        if c.get("unit") and not (f.min >= 0 and f.max <= 1):
            out.append("in [0, 1]")
        if c.get("unit_open") and not f.max < 1:
            out.append("below 1")
    if c.get("integral") and not f.integral:
        out.append("integral values")
    if c.get("range") and not (c["range"][0] <= f.min and f.max <= c["range"][1]):
        out.append("integer range")
    if c.get("zero_mask"):
        base_zeros = None if base is None else (
            base.zeros if isinstance(base, _Facts) else _Facts(base).zeros)
        if base_zeros is not None and not torch.equal(f.zeros, base_zeros):
            out.append("zero pattern")
        tri = c.get("triangular")
        if (tri == "lower" and not f.lower) or (tri == "upper" and not f.upper):
            out.append("%s-triangular" % tri)
    if c.get("symmetric") and not f.symmetric:
        out.append("symmetric")
    if c.get("row_sum_one") and not f.row_sum_one:
        out.append("rows sum to 1")
    s = c.get("sorted")
    if (s == "ascending" and not f.ascending) or (s == "descending" and not f.descending):
        out.append("sorted %s" % s)
    return out


# ---- trials inside the contract ------------------------------------------------------------

def can_sign(c):
    """Whether the signed trial may give this input fresh values of both signs: a floating
    input that takes negative values in its own draws and whose other invariants random
    signed values can be made to keep (a zero pattern, symmetry, order)."""
    return (c is not None and c["dtype"].startswith(("float", "bfloat")) and
            not c.get("nonnegative") and not c.get("integral") and not c.get("row_sum_one"))


def signed(inputs, contract, in_place=False):
    """The signed trial's inputs from a fresh draw: each input its contract lets be signed
    replaced by randn of its shape, projected back onto its invariants (zeros kept where the
    draw has them, symmetrised, sorted); every other input stays as drawn (a non-negative
    input keeps its draw's own fresh non-negative values). None when no input may be signed:
    the trial would then leave the contract or be one more seeded draw. With `in_place` the
    signed inputs are written into the drawn tensors themselves (no second copy of a large
    input; the draw is used up)."""
    if not any(can_sign(c) for c in contract):
        return None
    out = []
    for x, c in zip(inputs, list(contract) + [None] * (len(inputs) - len(contract))):
        if not isinstance(x, torch.Tensor) or not can_sign(c) or tuple(x.shape) != tuple(c["shape"]):
            out.append(x)
            continue
        zeros = (x == 0) if c.get("zero_mask") else None
        y = x.normal_() if in_place else torch.randn_like(x)
        if c.get("symmetric"):
            y = (y + y.transpose(-1, -2)) / 2
        if zeros is not None:
            y = y.masked_fill_(zeros, 0)
        if c.get("sorted"):
            y = torch.sort(y, dim=-1, descending=c["sorted"] == "descending").values
        out.append(y)
    return out


def why_unsigned(contract):
    """Why a problem's signed trial is skipped (no input may be signed)."""
    floats = [i for i, c in enumerate(contract) if c is not None and c["dtype"].startswith(("float", "bfloat"))]
    if not floats:
        return "the problem has no floating-point input to give signed values"
    return ("every floating-point input of the problem is non-negative, integral or a "
            "probability row in every draw of get_inputs() (inputs %s), so signed values would "
            "leave the problem's input contract" % ", ".join(str(i) for i in floats))


def swap_some(inputs, seed, contract=None, pairs=16, in_place=False):
    """The same inputs with a few pairs of elements swapped in each tensor (H06): the values,
    their sum and their range are unchanged, so a cache keyed on a sample or a checksum of the
    contents finds its old entry and replays a wrong answer. Swaps stay inside each input's
    contract: only between non-zero positions under a fixed zero pattern, within one row when
    rows sum to one, upper-triangle pairs mirrored onto the lower for a symmetric input, and
    none for a sorted input (no swap of distinct values keeps the order). With `in_place` the
    swaps are made in the tensors given (contiguous ones; no copy of a large input)."""
    g = torch.Generator()
    g.manual_seed(int(seed))
    contract = list(contract or [])
    out = []
    for j, x in enumerate(inputs):
        c = contract[j] if j < len(contract) else None
        if not isinstance(x, torch.Tensor) or x.numel() < 2 or (c and c.get("sorted")):
            out.append(x)
            continue
        y = x if in_place and x.is_contiguous() else x.clone(memory_format=torch.contiguous_format)
        flat = y.view(-1)
        n = flat.numel()
        cols = x.shape[-1] if x.dim() >= 1 else 1
        sym = bool(c and c.get("symmetric")) and x.dim() >= 2
        many = 8 * pairs if c else pairs
        a = torch.randint(0, n, (2 * many,), generator=g)
        if c and c.get("row_sum_one"):
            # b in a's row: the row keeps its values, so its sum.
            b_col = torch.randint(0, cols, (2 * many,), generator=g)
            b = a - a % cols + b_col
        else:
            b = torch.randint(0, n, (2 * many,), generator=g)
        keep = torch.ones(a.shape, dtype=torch.bool)
        if sym:
            def upper(p):
                r, q = (p // cols) % x.shape[-2], p % cols
                return r <= q
            keep &= upper(a) & upper(b)
        if c and c.get("zero_mask"):
            keep &= (flat[a.to(y.device)] != 0).cpu() & (flat[b.to(y.device)] != 0).cpu()
        # Pairs of distinct positions, none used twice: a true permutation of the values.
        used, pa, pb = set(), [], []
        for u, v in zip(a[keep].tolist(), b[keep].tolist()):
            if len(pa) == pairs:
                break
            if u == v or u in used or v in used:
                continue
            used.update((u, v))
            pa.append(u)
            pb.append(v)
        a = torch.tensor(pa, dtype=torch.long, device=y.device)
        b = torch.tensor(pb, dtype=torch.long, device=y.device)
        va = flat[a].clone()
        flat[a] = flat[b]
        flat[b] = va
        if sym:
            # Mirror the changed upper positions onto the lower triangle.
            for p in (a, b):
                rc = x.shape[-2] * cols
                base, r, q = p - p % rc, (p % rc) // cols, p % cols
                flat[base + q * cols + r] = flat[p]
        out.append(y)
    return out
