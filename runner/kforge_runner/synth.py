"""The PyTorch side of `kforge synth`: run and time synthesized problems' references.

    python3 -m kforge_runner.synth check --atol JSON --rtol JSON [--device cpu|cuda]
                                         [--draws N] PATH...
    python3 -m kforge_runner.synth time [--device cpu|cuda] [--stop-ms MS] PATH...

check: the lint-problems checks (lint.lint_problem: finite, not zeros, not a constant, not an
input, not a subsample, varies more than the tolerance), then, for a half or bfloat16 problem,
that float math passes its own tolerance (the model and inputs upcast to float32, the result
rounded back, compared with the judge's test at --atol and --rtol, the tolerances per dtype
name kforge sends the judge: a problem whose low-precision reference rounds
away from float math by more than that is one an honest kernel fails), then the reference on
each entry of
KFORGE_SHAPE_VARIANTS (it must run and stay finite, as the judge requires at load time), then
the median eager time of the main shape set. One line per problem:
{"problem", "ok", "findings": [{"code", "message"}], "reference_ms"}.

time: the median eager time of the main shape set, then of each variant in order, stopping
after the first that takes longer than --stop-ms or fails (calibration probes double a size
per variant). One line per problem: {"problem", "ms": [...]}.

Exit status 0 whatever the problems do (2 on a usage error).
"""
import argparse
import copy
import faulthandler
import json
import statistics
import sys
import time
import traceback

import torch

from . import lint
from .check import tolerances

VARIANT_SEED = 77


def _sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def median_ms(model, inputs, device, min_reps=3, min_s=0.05, max_reps=50):
    """Eager forward time: one warm-up call, then calls until min_reps and min_s are both met."""
    with torch.no_grad():
        model(*inputs)
        _sync(device)
        times = []
        while len(times) < min_reps or (sum(times) < min_s and len(times) < max_reps):
            t0 = time.perf_counter()
            model(*inputs)
            _sync(device)
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000.0


def _variant_inputs(module, variant, device):
    saved = {k: getattr(module, k) for k in variant}
    try:
        for k, v in variant.items():
            setattr(module, k, v)
        return lint.draw(module, VARIANT_SEED, device)
    finally:
        for k, v in saved.items():
            setattr(module, k, v)


LOW_PRECISION = (torch.float16, torch.bfloat16)


def _upcast(x):
    return x.float() if isinstance(x, torch.Tensor) and x.dtype in LOW_PRECISION else x


def conditioning(module, model, device, atol, rtol, seed=lint.DRAW_SEEDS[0]):
    """A finding when float math misses the problem's own tolerance (atol, rtol: the judge's
    maps) on a low-precision output, else None. Float math is what an honest kernel that
    accumulates in float32 computes; the judge compares with the reference rounded step by step
    in half or bfloat16."""
    inputs = lint.draw(module, seed, device)
    refs = lint.reference(model, inputs)
    if not any(r.dtype in LOW_PRECISION for r in refs):
        return None
    wide = copy.deepcopy(model).float()
    refs32 = lint.reference(wide, [_upcast(x) for x in inputs])
    for k, (r, r32) in enumerate(zip(refs, refs32)):
        if r.dtype not in LOW_PRECISION:
            continue
        at, rt = tolerances(atol, rtol, r.dtype)
        if not lint._close(r32, r, at, rt):
            return {"code": "ill_conditioned",
                    "message": "output %d: float32 math rounded to %s differs from the %s "
                               "reference beyond its tolerance (atol %g, rtol %g) on %.1f%% of "
                               "the elements (an honest kernel would fail)" % (
                                   k, str(r.dtype)[6:], str(r.dtype)[6:], at, rt,
                                   100.0 * (1.0 - lint._frac_close(r32, r, at, rt)))}
    return None


def check(path, device, seeds, atol, rtol):
    """The findings of one synthesized problem; atol, rtol: the judge's maps (dtype name ->
    value)."""
    result = lint.lint_problem(path, atol, rtol, device, seeds)
    findings = list(result["findings"])
    out = {"problem": path, "ok": False, "findings": findings, "reference_ms": None}
    if findings:
        return out
    try:
        module, model = lint.load_problem(path, device)
        bad = conditioning(module, model, device, atol, rtol)
        if bad:
            findings.append(bad)
        for i, v in enumerate(getattr(module, "KFORGE_SHAPE_VARIANTS", []) or []):
            refs = lint.reference(model, _variant_inputs(module, v, device))
            if not all(bool(torch.isfinite(r).all()) for r in refs if r.is_floating_point()):
                findings.append({"code": "variant_error",
                                 "message": "the output has NaN or Inf on variant %d %r" % (i, v)})
        if not findings:
            out["reference_ms"] = median_ms(model, lint.draw(module, lint.DRAW_SEEDS[0], device),
                                            device)
    except Exception as e:  # noqa: BLE001 - a broken problem is a finding
        findings.append({"code": "variant_error", "message": "%s: %s\n%s" % (
            type(e).__name__, e, traceback.format_exc(limit=-2))})
    out["ok"] = not findings
    return out


def time_sets(path, device, stop_ms):
    ms = []
    try:
        module, model = lint.load_problem(path, device)
        sets = [None] + list(getattr(module, "KFORGE_SHAPE_VARIANTS", []) or [])
        for v in sets:
            inputs = (lint.draw(module, lint.DRAW_SEEDS[0], device) if v is None
                      else _variant_inputs(module, v, device))
            ms.append(median_ms(model, inputs, device))
            del inputs
            if ms[-1] > stop_ms:
                break
    except Exception as e:  # noqa: BLE001 - out of memory at a large size ends the sweep
        sys.stderr.write("kforge_runner.synth: %s stopped: %s: %s\n" % (path, type(e).__name__, e))
    return {"problem": path, "ms": ms}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m kforge_runner.synth")
    ap.add_argument("mode", choices=["check", "time"])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--draws", type=int, default=len(lint.DRAW_SEEDS))
    ap.add_argument("--stop-ms", type=float, default=30.0)
    ap.add_argument("--dump-after-s", type=float, default=0.0,
                    help="print every thread's Python stack to stderr when one problem has "
                         "taken this long (0: never): where a slow or hung problem is")
    lint.add_tolerance_flags(ap, required=False)  # check's, not time's
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args(argv)
    if args.mode == "check" and (args.atol is None or args.rtol is None):
        ap.error("check needs --atol and --rtol (the judge's tolerances per dtype name)")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    seeds = tuple(11 * (i + 1) for i in range(max(1, args.draws)))
    for path in args.paths:
        if args.dump_after_s > 0:
            sys.stderr.write("kforge_runner.synth: %s\n" % path)
            faulthandler.dump_traceback_later(args.dump_after_s)
        if args.mode == "check":
            result = check(path, args.device, seeds, args.atol, args.rtol)
        else:
            result = time_sets(path, args.device, args.stop_ms)
        faulthandler.cancel_dump_traceback_later()
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
