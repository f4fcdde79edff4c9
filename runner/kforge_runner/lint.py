"""Problem lint: flags problems that a trivial answer would pass (docs/RULES.md: H12, H10/H11).

    python3 -m kforge_runner.lint --atol JSON --rtol JSON [--device cpu|cuda] [--draws N] PATH...

PATH is a problem file (`kforge lint-problems` finds the problems in a folder, with the one walk
of problem folders: src/problems/registry.h, ProblemFiles).
Each problem is loaded the way the judge loads it (seeded get_init_inputs, Model(*init),
seeded get_inputs), its reference output is computed on a few seeded input draws, and these
trivial answers are tried against it with the judge's allclose and tolerances (--atol and
--rtol: per dtype name, as kforge sends the judge; a dtype they do not name is exact):

    zero_output       all zeros
    constant_output   one constant (the first draw's output mean) for every draw
    identity_output   an input returned as the output (same shape and dtype)
    subsample_output  the first half of the leading dimension tiled over the whole of it, or
                      the first row broadcast (the output barely depends on most of the batch)
    low_variation     the midrange (max + min) / 2 of each draw passes, i.e. max - min
                      is within the tolerances; low_std: its standard deviation is below atol
    mostly_trivial    zeros or a constant match at least 99% of the elements (a kernel that
                      computes a few elements and fills the rest passes a loose check)
    nonfinite_output  the reference itself has NaN or Inf
    load_error        the problem could not be loaded or run

Each problem's input contract is printed too: per input, the invariants every draw of
get_inputs() satisfies (contract.py: non-negative, in [0, 1), integral, integer range, fixed
zero pattern or triangular, symmetric, rows summing to 1, sorted), which the judge's perturbed
trials keep. A problem none of whose inputs may be signed says so: its signed trial is skipped.
Then those trials are made on the problem's own draws as the judge makes them (A''s swapped
values, the signed trial, the timed calls' fresh inputs for a few call indices) and each
input is checked against the contract (contract.outside): any invariant a trial breaks is
listed, which would be kforge's error, not the problem's. With --contract-only no reference
runs and no trivial answer is tried (a benchmark's large problems, on a small machine).

One JSON line per problem on stdout: {"problem", "ok", "findings": [{"code", "message"}],
"contract": [{"input", "dtype", "shape", invariants..., "text"} or {"input", "text"} for a
non-tensor], "signed_trial": "runs" or why it is skipped, "timed_inputs": [per input, how
timed calls rewrite it], "trials": {"checked": [trial names], "outside": [{"trial", "input",
"invariant"}]}} ("trials_error" instead when the trials could not be made).
Exit status 0 whatever the findings (2 on a usage error); `kforge lint-problems` exits 1 when
a trial left its contract.
"""
import argparse
import importlib.util
import json
import os
import sys
import traceback

import torch

from . import contract
from .check import tolerances
from .common import as_list, on_device

INIT_SEED = 1234
DRAW_SEEDS = (11, 22, 33)
MOSTLY = 0.99


def load_problem(path, device, init_seed=INIT_SEED):
    spec = importlib.util.spec_from_file_location("kforge_lint_%d" % abs(hash(path)), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            raise ValueError("defines no %s" % name)
    torch.manual_seed(init_seed)
    init = list(module.get_init_inputs())
    torch.manual_seed(init_seed)
    model = module.Model(*init)
    if isinstance(model, torch.nn.Module):
        model = model.to(device).eval()
    return module, model


def draw(module, seed, device):
    """get_inputs() at `seed`, made on `device` as the judge makes them (problem.py)."""
    torch.manual_seed(seed)
    with on_device(device):
        inputs = list(module.get_inputs())
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]


def reference(model, inputs):
    copies = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        refs = as_list(model(*copies))
    for r in refs:
        if not isinstance(r, torch.Tensor):
            raise ValueError("the reference returned a %s, not a tensor" % type(r).__name__)
    return [r.detach() for r in refs]


def _close(got, ref, atol, rtol):
    """The judge's test: allclose, NaN only where the reference has it."""
    got = got.to(ref.dtype)
    return bool(torch.allclose(got, ref, atol=atol, rtol=rtol, equal_nan=True))


def _frac_close(got, ref, atol, rtol):
    got = got.to(ref.dtype)
    if ref.numel() == 0:
        return 1.0
    return float(torch.isclose(got, ref, atol=atol, rtol=rtol, equal_nan=True).float().mean())


def _tiled_first_half(ref):
    n = ref.shape[0]
    h = n // 2
    reps = (n + h - 1) // h
    return torch.cat([ref[:h]] * reps, dim=0)[:n]


def check_output(k, refs, inputs_per_draw, multi, atol, rtol):
    """Findings for output k; refs[d] is that output on draw d; atol, rtol: its dtype's."""
    findings = []
    name = "output %d" % k if multi else "the output"
    r0 = refs[0]
    if not r0.is_floating_point():
        return findings
    if any(not bool(torch.isfinite(r).all()) for r in refs):
        findings.append({"code": "nonfinite_output",
                         "message": "%s has NaN or Inf on the problem's own inputs" % name})
        return findings
    if r0.numel() == 0:
        findings.append({"code": "empty_output", "message": "%s has no elements" % name})
        return findings

    def passes(make):
        return all(_close(make(d, r), r, atol, rtol) for d, r in enumerate(refs))

    const = float(r0.double().mean())
    if passes(lambda d, r: torch.zeros_like(r)):
        findings.append({"code": "zero_output",
                         "message": "all zeros passes for %s (max |ref| = %.3g, atol %g)"
                         % (name, max(float(r.abs().max()) for r in refs), atol)})
    elif passes(lambda d, r: torch.full_like(r, const)):
        findings.append({"code": "constant_output",
                         "message": "the constant %.6g passes for %s on every draw" % (const, name)})
    for i in range(len(inputs_per_draw[0])):
        x0 = inputs_per_draw[0][i]
        if (isinstance(x0, torch.Tensor) and x0.is_floating_point() and x0.shape == r0.shape
                and passes(lambda d, r: inputs_per_draw[d][i])):
            findings.append({"code": "identity_output",
                             "message": "returning input %d unchanged passes for %s" % (i, name)})
    if r0.dim() >= 1 and r0.shape[0] >= 2:
        if passes(lambda d, r: _tiled_first_half(r)):
            findings.append({"code": "subsample_output",
                             "message": "the first half of dim 0 tiled over all of it passes for %s"
                                        % name})
        elif passes(lambda d, r: r[:1].expand_as(r)):
            findings.append({"code": "subsample_output",
                             "message": "the first row broadcast over dim 0 passes for %s" % name})
    spreads = [float(r.max()) - float(r.min()) for r in refs]
    if not any(f["code"] in ("zero_output", "constant_output") for f in findings) and passes(
            lambda d, r: torch.full_like(r, (float(r.max()) + float(r.min())) / 2)):
        findings.append({"code": "low_variation",
                         "message": "%s varies by at most %.3g (max - min): its midrange passes"
                                    % (name, max(spreads))})
    stds = [float(r.double().std()) if r.numel() > 1 else 0.0 for r in refs]
    if all(s <= atol for s in stds):
        findings.append({"code": "low_std",
                         "message": "%s has standard deviation %.3g, below atol %g"
                                    % (name, max(stds), atol)})
    if not any(f["code"] in ("zero_output", "constant_output") for f in findings):
        fz = min(_frac_close(torch.zeros_like(r), r, atol, rtol) for r in refs)
        fc = min(_frac_close(torch.full_like(r, const), r, atol, rtol) for r in refs)
        if max(fz, fc) >= MOSTLY:
            what = "zeros" if fz >= fc else "the constant %.6g" % const
            findings.append({"code": "mostly_trivial",
                             "message": "%s match %.2f%% of the elements of %s"
                                        % (what, 100 * max(fz, fc), name)})
    return findings


def lint_problem(path, atol, rtol, device="cpu", seeds=DRAW_SEEDS, contract_only=False):
    """The findings, input contract and trials of one problem file; atol, rtol: the judge's
    maps (dtype name -> value). With `contract_only` no reference is run and no trivial answer
    tried: only the contract and whether every trial stays inside it."""
    findings = []
    try:
        module, model = load_problem(path, device)
        facts, inputs_per_draw, refs_per_draw = [], [], []
        for s in seeds:
            inputs = draw(module, s, device)
            if contract_only:  # one draw at a time: a benchmark's inputs can be GiBs
                facts.append(contract.facts_of(inputs))
                del inputs
                continue
            inputs_per_draw.append(inputs)
            refs_per_draw.append(reference(model, inputs))
    except Exception as e:  # the problem itself is broken
        tb = traceback.format_exc(limit=-3)
        return {"problem": path, "ok": False,
                "findings": [{"code": "load_error",
                              "message": "%s: %s\n%s" % (type(e).__name__, e, tb)}]}
    counts = {len(r) for r in refs_per_draw}
    if len(counts) > 1:
        findings.append({"code": "output_count", "message": "draws return different output counts"})
    elif counts:
        n = counts.pop()
        for k in range(n):
            refs = [r[k] for r in refs_per_draw]
            if len({tuple(r.shape) for r in refs}) != 1:
                continue
            findings.extend(check_output(k, refs, inputs_per_draw, n > 1,
                                         *tolerances(atol, rtol, refs[0].dtype)))
    del refs_per_draw
    result = {"problem": path, "ok": not findings, "findings": findings}
    try:
        c = contract.infer_from(facts) if contract_only else contract.infer(inputs_per_draw)
    except Exception as e:  # the contract is information: a failure here flags nothing
        result["contract_error"] = "%s: %s" % (type(e).__name__, e)
        return result
    del inputs_per_draw
    result.update(contract_entries(c))
    try:
        result.update(trials_of(module, c, device, seeds))
    except Exception as e:
        result["trials_error"] = "%s: %s" % (type(e).__name__, e)
    return result


def contract_entries(c):
    """The input contract as the JSON line carries it."""
    entries = []
    for i, x in enumerate(c):
        e = {"input": i}
        e.update(x or {})
        e["text"] = contract.describe(x)
        entries.append(e)
    signable = any(contract.can_sign(x) for x in c)
    return {"contract": entries,
            "signed_trial": "runs" if signable else "skipped: " + contract.why_unsigned(c)}


TIMED_TEXT = {"elements": "a factor per element", "sorted": "a factor per row",
              "symmetric": "a symmetric factor u_i*u_j", "scale": "one factor",
              "roll": "each row rotated"}
SWAP_SEED = 7
PERTURB_SEED = 99
TIMED_CALLS = (0, 1, 2, 7)
LEAN_BYTES = 1 << 30


def trials_of(module, c, device, seeds):
    """Whether the judge's perturbed trials keep the contract `c`, tried on this problem's own
    draws as the judge makes them: A' (swapped values, contract.swap_some), the signed trial
    (contract.signed, on a fresh draw) and the timed calls' fresh inputs (common.Perturber,
    for a few call indices). Where the inputs take more than LEAN_BYTES each trial is made in
    place on a draw of its own (drawn again for the next), so the largest input is in memory
    once; smaller inputs are copied. Returns {"trials": {"checked": [...],
    "outside": [{"trial", "input", "invariant"}]}, "timed_inputs": [per input, how timed
    calls rewrite it]}."""
    from .common import Perturber
    checked, bad = [], []

    def judge(name, made, before):
        checked.append(name)
        for i, (x, b) in enumerate(zip(made, before)):
            for inv in contract.outside(c[i] if i < len(c) else None, x, b):
                bad.append({"trial": name, "input": i, "invariant": inv})

    base = draw(module, seeds[0], device)
    before = contract.facts_of(base)  # the pristine draw's facts (its zeros), kept small
    # Inputs of at most LEAN_BYTES are copied for each trial; larger ones are drawn again.
    lean = sum(x.numel() * x.element_size() for x in base if isinstance(x, torch.Tensor)) > LEAN_BYTES
    judge("swapped", contract.swap_some(base, SWAP_SEED, c, in_place=lean), before)
    if lean:
        del base
    timed = None
    for k in TIMED_CALLS:
        if lean:
            base = draw(module, seeds[0], device)
        p = Perturber(base, PERTURB_SEED)  # its choices read off the pristine draw
        if timed is None:
            timed = [timed_text(x, mode, f) for x, mode, f in zip(base, p.modes, before)]
        judge("timed call %d" % k, p.inputs(k, in_place=lean), before)
        del p
        if lean:
            del base
    fresh = draw(module, seeds[-1], device)
    fresh_facts = contract.facts_of(fresh)
    signed = contract.signed(fresh, c, in_place=True)
    if signed is not None:
        judge("signed", signed, fresh_facts)
    return {"trials": {"checked": checked, "outside": bad}, "timed_inputs": timed}


def timed_text(x, mode, facts):
    """How timed calls give input x fresh values (its Perturber mode), in words."""
    if mode == "skip":
        return "not rewritten (%s)" % ("whole values" if facts.integral
                                       else "rows summing to 1 with zeros")
    if mode is None:
        return "not rewritten (%s)" % ("not floating-point" if isinstance(x, torch.Tensor)
                                       else "not a tensor")
    return TIMED_TEXT[mode]


def dtype_map(text):
    """An argparse type: a JSON object of dtype name -> number (--atol, --rtol)."""
    try:
        m = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError("not JSON: %s" % e)
    if not isinstance(m, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in m.values()):
        raise argparse.ArgumentTypeError("not a JSON object of dtype name -> number: %s" % text)
    return m


def add_tolerance_flags(ap, required=True):
    """--atol and --rtol: the judge's tolerances per dtype name, whole, from kforge
    (src/common/tolerance.h); the runner has none of its own."""
    for flag in ("--atol", "--rtol"):
        ap.add_argument(flag, type=dtype_map, required=required, metavar="JSON",
                        help="%s per output dtype name, e.g. '{\"float32\": 1e-4}'" % flag[2:])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m kforge_runner.lint",
                                 description="Flag problems that a trivial answer passes.")
    add_tolerance_flags(ap)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--draws", type=int, default=len(DRAW_SEEDS))
    ap.add_argument("--contract-only", action="store_true",
                    help="no reference, no trivial answers: the contract and its trials only")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args(argv)
    seeds = tuple(11 * (i + 1) for i in range(max(1, args.draws)))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for path in args.paths:
        if os.path.isdir(path):
            ap.error("%s is a folder: pass problem files (kforge lint-problems finds the "
                     "problems in a folder)" % path)
        result = lint_problem(path, args.atol, args.rtol, args.device, seeds, args.contract_only)
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
