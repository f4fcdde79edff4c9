"""Sanity check for kforge's own problems: run with /usr/bin/python3 problems/check_problems.py [PATH...]."""
import importlib.util
import math
import pathlib
import sys
import time

import torch

HERE = pathlib.Path(__file__).resolve().parent
TOL = 1e-4
MAX_INPUT_BYTES = 32 * 1024 * 1024


def load(path):
    spec = importlib.util.spec_from_file_location("kforge_problem_" + path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def outputs_of(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def run(mod, seed, sign=1.0):
    torch.manual_seed(seed)
    inputs = [x * sign if torch.is_tensor(x) else x for x in mod.get_inputs()]
    torch.manual_seed(1234)
    model = mod.Model(*mod.get_init_inputs())
    with torch.no_grad():
        outs = outputs_of(model(*inputs))
    return model, inputs, outs


def problems_in(args):
    if args:
        return [pathlib.Path(a).resolve() for a in args]
    return sorted(p for lvl in ("level1", "level2", "level3") for p in (HERE / lvl).glob("*.py"))


def check(path):
    errors = []
    mod = load(path)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(mod, name):
            return [f"missing {name}"], None, None
    for v in mod.get_init_inputs():
        if not isinstance(v, (int, float, bool)):
            errors.append(f"init input {v!r} is not a plain Python number")
    model, inputs, outs = run(mod, 0)
    nbytes = sum(x.numel() * x.element_size() for x in inputs if torch.is_tensor(x))
    if nbytes > MAX_INPUT_BYTES:
        errors.append(f"inputs take {nbytes / 2**20:.1f} MiB > 32 MiB")
    for x in inputs:
        if torch.is_tensor(x) and x.dtype != torch.float32:
            errors.append(f"input dtype {x.dtype} is not float32")
    # determinism: same seed, same answer
    _, _, outs2 = run(mod, 0)
    for a, b in zip(outs, outs2):
        if not torch.equal(a, b):
            errors.append("two runs with the same seed differ")
    # a second seed must give a different answer
    _, _, outs3 = run(mod, 1)
    if all(torch.allclose(a, b, atol=TOL, rtol=TOL) for a, b in zip(outs, outs3)):
        errors.append("output does not depend on the inputs")
    stds = []
    for sign in (1.0, -1.0):
        _, ins, os_ = run(mod, 2, sign)
        for o in os_:
            if not torch.isfinite(o).all():
                errors.append(f"non-finite output (sign {sign:+.0f})")
                continue
            s = o.double().std().item() if o.numel() > 1 else 0.0
            stds.append(s)
            if s < 1e-3:
                errors.append(f"near-constant output, std {s:.2e} (sign {sign:+.0f})")
            const = torch.full_like(o, o.double().mean().item())
            if torch.allclose(const, o, atol=TOL, rtol=TOL):
                errors.append("a constant passes allclose")
            if torch.allclose(torch.zeros_like(o), o, atol=TOL, rtol=TOL):
                errors.append("zeros pass allclose")
            for x in ins:
                if torch.is_tensor(x) and x.shape == o.shape and torch.allclose(x, o, atol=TOL, rtol=TOL):
                    errors.append("output equals an input")
    # eager timing
    with torch.no_grad():
        for _ in range(3):
            model(*inputs)
        n, t0 = 0, time.perf_counter()
        while n < 5 or time.perf_counter() - t0 < 0.5:
            model(*inputs)
            n += 1
        ms = (time.perf_counter() - t0) / n * 1e3
    return errors, ms, (min(stds) if stds else float("nan")), nbytes


def main():
    torch.set_grad_enabled(False)
    bad = 0
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"{'problem':40s} {'eager ms':>9s} {'min std':>9s} {'in MiB':>7s}  result")
    for path in problems_in(sys.argv[1:]):
        rel = path.relative_to(HERE) if path.is_relative_to(HERE) else path
        try:
            errors, ms, std, nbytes = check(path)
        except Exception as e:  # report and go on with the next problem
            errors, ms, std, nbytes = [f"{type(e).__name__}: {e}"], math.nan, math.nan, 0
        if ms is not None and not (0.2 <= ms <= 40):
            print(f"  note: {rel}: eager time {ms:.2f} ms is outside the intended 1-20 ms range")
        bad += bool(errors)
        print(f"{str(rel):40s} {ms:9.2f} {std:9.4f} {nbytes / 2**20:7.1f}  {'FAIL: ' + '; '.join(errors) if errors else 'ok'}")
    print("FAILED" if bad else "all problems ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
