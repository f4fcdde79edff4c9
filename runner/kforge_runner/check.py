"""The judge's check of one trial: the candidate's inputs unchanged, and each output it wrote
within tolerance of the reference's (per dtype; NaN and Inf only where the reference has them).
"""
import torch

from . import transport
from .common import Perturber
from .slots import KEEP_SHARE

# Outputs are compared this many elements at a time. A chunk's comparison takes up to about 8
# float32 temporaries of its size (its failure account most), so where the judge plans with
# less than 32 GiB (a small GPU, a memory budget) chunks are smaller, down to MIN_COMPARE_CHUNK,
# keeping that work space within KEEP_SHARE of the memory (`compare_chunk`).
COMPARE_CHUNK = 1 << 24
MIN_COMPARE_CHUNK = 1 << 20
CHUNK_WORK_BYTES = 32  # per element of a chunk


def compare_chunk(plan_bytes):
    """Elements compared at a time when the judge plans with `plan_bytes` (0: unknown)."""
    if not plan_bytes:
        return COMPARE_CHUNK
    fits = int(plan_bytes * KEEP_SHARE) // CHUNK_WORK_BYTES
    return min(COMPARE_CHUNK, max(MIN_COMPARE_CHUNK, fits))


def check_trial(problem, slot, msg):
    """The reply to a check of `slot` (a prepared trial the candidate has run on): H09 when an
    input changed, H06 when a swapped trial's outputs answer the inputs before the swap."""
    perturb = msg.get("perturb")
    chunk = compare_chunk(problem.memory.plan_bytes() if problem is not None else 0)
    # The pristine inputs (kept, or drawn again from the slot's recipe), and the reference
    # outputs when kept; otherwise the reference runs after the inputs are checked.
    if slot.kept is not None:
        expected_inputs, refs = slot.kept
    else:
        expected_inputs, refs = problem.inputs_of(slot.recipe), None
    if perturb:
        # Timed outputs: the last timed call saw the inputs of its own index. A redraw is the
        # judge's own, rewritten where it lies; kept inputs are copied.
        expected_inputs = Perturber(expected_inputs, perturb["seed"]).inputs(
            int(perturb["index"]), in_place=slot.kept is None)
        refs = None
    for i, (buf, orig) in enumerate(zip(slot.in_bufs, expected_inputs)):
        if isinstance(orig, torch.Tensor) and not torch.equal(buf, orig):
            return {"ok": True, "pass": False, "rule": "H09", "code": "input_mutated",
                    "message": "the candidate changed input %d in place" % i}
    if refs is None:
        refs = problem.reference(expected_inputs, copy=False)
    ok, results = _compare_outputs(slot.out_bufs, refs, msg, chunk)
    del expected_inputs, refs
    if not ok and slot.swapped and not perturb and _replayed(problem, slot, chunk):
        return {"ok": True, "pass": False, "rule": "H06", "code": "replayed",
                "message": "after a few input values were swapped, the outputs were "
                           "exactly the answer to the earlier inputs: results are "
                           "remembered, not computed"}
    return {"ok": True, "pass": ok, "outputs": results}


def tolerances(atol, rtol, dtype):
    """(atol, rtol) for outputs of `dtype` from kforge's maps (dtype name -> value, whole in
    every request: src/common/tolerance.h); a dtype they do not name is compared exactly."""
    name = transport.dtype_name(dtype)
    return float(atol.get(name, 0.0)), float(rtol.get(name, 0.0))


def _compare_outputs(outs, refs, msg, chunk):
    """Each output against its reference with the request's tolerances for its dtype; returns
    (all passed, each output's facts)."""
    results = []
    ok = True
    for i, (buf, ref) in enumerate(zip(outs, refs)):
        atol, rtol = tolerances(msg["atol"], msg["rtol"], ref.dtype)
        good, facts = compare(buf, ref, atol, rtol, chunk)
        facts.update({"output": i, "atol": atol, "rtol": rtol, "pass": good})
        results.append(facts)
        ok = ok and good
    return ok, results


def _replayed(problem, slot, chunk):
    """Whether the outputs are exactly the answer to the inputs before a few values were
    swapped: an answer remembered from an earlier call."""
    unswapped = dict(slot.recipe, swap_seed=0)
    replay_refs = problem.reference(problem.inputs_of(unswapped), copy=False)
    return all(compare(buf, old, 0.0, 0.0, chunk)[0]
               for buf, old in zip(slot.out_bufs, replay_refs))


def finite(refs, chunk=None):
    """Whether every floating-point reference output is finite, looked at `chunk` elements at a
    time (isfinite makes a temporary of its input's size)."""
    chunk = chunk or COMPARE_CHUNK
    for r in refs:
        if r.is_floating_point():
            flat = r.reshape(-1)
            for at in range(0, flat.numel(), chunk):
                if not bool(torch.isfinite(flat[at:at + chunk]).all()):
                    return False
    return True


def compare(out, ref, atol, rtol, chunk=None):
    """Compare one output with its reference; returns (ok, facts). Works through both in chunks
    of `chunk` elements (COMPARE_CHUNK unless given), so checking a multi-GiB output needs
    little more memory."""
    chunk = chunk or COMPARE_CHUNK
    if out.shape != ref.shape:
        raise ValueError("output shape %s, reference %s" % (tuple(out.shape), tuple(ref.shape)))
    o_flat, r_flat = out.reshape(-1), ref.reshape(-1)
    n = r_flat.numel()
    if ref.is_floating_point() and out.dtype == ref.dtype:
        # One pass for the common case; the detailed account below only for failures. A match
        # still reports its largest errors (the verdict's trial records: how close it came).
        good = True
        max_abs = max_rel = 0.0
        for at in range(0, n, chunk):
            o, r = o_flat[at:at + chunk], r_flat[at:at + chunk]
            finite_ok = bool((torch.isfinite(o) | ~torch.isfinite(r)).all())
            if not (finite_ok and torch.allclose(o, r, rtol=rtol, atol=atol, equal_nan=True)):
                good = False
                break
            if o.numel():
                if o.element_size() < 4:  # half and bfloat16: the errors in float32
                    o, r = o.float(), r.float()
                both = torch.isfinite(o) & torch.isfinite(r)
                d = torch.where(both, (o - r).abs(), torch.zeros_like(o))
                max_abs = max(max_abs, float(d.max()))
                max_rel = max(max_rel, float((d / r.abs().clamp_min(1e-12)).max()))
        if good:
            return True, {"bad_elements": 0, "elements": int(n), "max_abs_err": max_abs,
                          "max_rel_err": max_rel}
    facts = {"bad_elements": 0, "elements": int(n)}
    if ref.is_floating_point():
        facts.update({"max_abs_err": 0.0, "max_rel_err": 0.0, "nonfinite_where_ref_finite": 0})
    first_bad = None
    for at in range(0, n, chunk):
        o, r = o_flat[at:at + chunk], r_flat[at:at + chunk]
        bad = _account(o, r, atol, rtol, facts)
        nbad = int(bad.sum())
        facts["bad_elements"] += nbad
        if nbad and first_bad is None:
            k = int(bad.to(torch.uint8).argmax())  # the first bad element
            first_bad = (at + k, o[k], r[k])
    if first_bad is not None:
        flat, got, want = first_bad
        idx = []
        for dim in reversed(ref.shape):
            idx.append(flat % dim)
            flat //= dim
        idx.reverse()
        facts["first_bad_index"] = idx
        facts["first_bad_got"] = float(got)
        facts["first_bad_expected"] = float(want)
    return facts["bad_elements"] == 0, facts


def _account(o, r, atol, rtol, facts):
    """The bad elements of one chunk; folds its error maxima into `facts`. In the outputs' own
    precision (half and bfloat16 in float32): float64 took 5 times as long on a wrong float32
    output of 4M elements (2.0 s against 0.4 s on the CPU)."""
    o = o.float() if o.is_floating_point() and o.element_size() < 4 else o
    r = r.float() if r.is_floating_point() and r.element_size() < 4 else r
    if not r.is_floating_point():
        return o != r
    finite_ref = torch.isfinite(r)
    diff = (o - r).abs()
    bad = ~(diff <= atol + rtol * r.abs())
    # Non-finite values must match exactly (same inf, NaN where the reference has NaN).
    same_nonfinite = (~finite_ref) & ((o == r) | (torch.isnan(o) & torch.isnan(r)))
    bad = bad & ~same_nonfinite
    finite_both = finite_ref & torch.isfinite(o)
    if diff.numel():
        d = torch.where(finite_both, diff, torch.zeros_like(diff))
        rel = d / r.abs().clamp_min(1e-12)
        facts["max_abs_err"] = max(facts["max_abs_err"], float(d.max()))
        facts["max_rel_err"] = max(facts["max_rel_err"],
                                   float(torch.where(finite_both, rel, torch.zeros_like(rel)).max()))
    facts["nonfinite_where_ref_finite"] += int((finite_ref & ~torch.isfinite(o)).sum())
    return bad

