"""Runs the GPU Triton candidates (examples/triton_cuda) on the CPU stand-in for Triton, on
shrunk problem sizes, against the problems' Model at the verifier's fp32 tolerance.

It checks what the stand-in can: each kernel's indexing, masks, strides, reductions and
epilogue compute the reference's answer (ragged sizes: every size above 64 becomes an odd one
between 37 and 47, batches become 2). It cannot check what only a GPU shows: that Triton
compiles the kernel, its speed, TF32 or fp32 rounding on the device. bench/triton_h200.sh does.
With --kb KB (the KernelBench folder holding level1/), a candidate with a
`# kforge-problem-kb:` header is also checked against that problem, shrunk the same way.

Usage: /usr/bin/python3 examples/check_triton_examples.py [--kb KB] [files...]   (default: all)
Prints one line per candidate and problem, and exits 1 if any differs.
"""
import glob
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "triton", "fake_triton"))

import torch  # noqa: E402

HEADER = re.compile(r"^# kforge-problem: *(\S+)", re.M)
KB_HEADER = re.compile(r"^# kforge-problem-kb: *(\S+)", re.M)


def shrink(name, value):
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    if name == "batch_size":
        return min(value, 2)
    return 37 + value % 11 if value > 64 else value


def check(path, problem):
    with open(path) as f:
        code = f.read()
    names = {"__name__": "problem"}
    with open(problem) as f:
        exec(compile(f.read(), problem, "exec"), names)
    for k, v in list(names.items()):
        if not k.startswith("_") and k.isidentifier():
            names[k] = shrink(k, v)
    inits = names["get_init_inputs"]()
    torch.manual_seed(0)
    model = names["Model"](*inits)
    candidate = dict(names)
    candidate["__name__"] = "candidate"
    exec(compile(code, path, "exec"), candidate)
    torch.manual_seed(0)
    new = candidate["ModelNew"](*inits)
    worst = 0.0
    with torch.no_grad():
        for seed in (1, 2):
            torch.manual_seed(seed)
            inputs = names["get_inputs"]()
            want = model(*[x.clone() for x in inputs])
            got = new(*[x.clone() for x in inputs])
            if got.shape != want.shape:
                return False, "shape %s, expected %s" % (list(got.shape), list(want.shape))
            worst = max(worst, float((got - want).abs().max()))
            if not torch.allclose(got, want, atol=1e-4, rtol=1e-4):
                return False, "beyond atol = rtol = 1e-4 (max abs error %.3g)" % worst
    return True, "within atol = rtol = 1e-4 (max abs error %.2g), shapes %s" % (
        worst, [list(x.shape) for x in inputs])


def problems_of(path, kb):
    """(label, problem file) for our problem and, with kb, the KernelBench one it names."""
    with open(path) as f:
        head = f.read(2000)
    rel = os.path.relpath(path, ROOT)
    found = [(rel, os.path.join(ROOT, "problems", HEADER.search(head).group(1)))]
    m = KB_HEADER.search(head)
    if kb and m:
        found.append(("%s on kb %s" % (rel, m.group(1)), os.path.join(kb, m.group(1))))
    return found


def main():
    args = sys.argv[1:]
    kb = None
    if args[:1] == ["--kb"]:
        kb, args = args[1], args[2:]
    files = args or sorted(glob.glob(os.path.join(ROOT, "examples/triton_cuda/*/*.py")))
    runs = failed = 0
    for path in files:
        for label, problem in problems_of(path, kb):
            t0 = time.time()
            try:
                ok, what = check(path, problem)
            except Exception as e:  # noqa: BLE001 - reported per candidate
                ok, what = False, "%s: %s" % (type(e).__name__, e)
            runs += 1
            failed += not ok
            print("%s %-45s %5.1fs  %s" % ("PASS" if ok else "FAIL", label, time.time() - t0,
                                            what), flush=True)
    print("%d passed, %d failed" % (runs - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
