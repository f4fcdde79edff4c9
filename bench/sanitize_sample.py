"""One candidate's forward outside kforge, for compute-sanitizer: the evidence a corpus ruling
needs where a kernel faults under kforge and did not where its source ran (corpus_agreement's
"kforge, crash" rows).

    compute-sanitizer --tool memcheck python3 bench/sanitize_sample.py PROBLEM CANDIDATE [--calls N]

Loads the problem (Model, get_inputs, get_init_inputs) and the candidate (ModelNew), copies
Model's parameters into ModelNew the way KernelBench's harness seeds both (the same seed before
each constructor), runs N forward calls (default 2) on the problem's own inputs and compares
them with Model's. Prints `ok`, `mismatch MAX_ABS` or the exception; memcheck's report says
whether a kernel reads or writes out of bounds. Standard library and torch only.
"""
import argparse
import runpy
import sys

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("problem")
    ap.add_argument("candidate")
    ap.add_argument("--calls", type=int, default=2)
    a = ap.parse_args()
    p = runpy.run_path(a.problem)
    c = runpy.run_path(a.candidate)
    init = p.get("get_init_inputs", lambda: [])()
    torch.manual_seed(42)
    ref = p["Model"](*init).cuda()
    torch.manual_seed(42)
    new = c["ModelNew"](*init).cuda()
    for i in range(a.calls):
        torch.manual_seed(i + 1)
        inputs = [x.cuda() if torch.is_tensor(x) else x for x in p["get_inputs"]()]
        try:
            with torch.no_grad():
                want = ref(*inputs)
                got = new(*inputs)
            torch.cuda.synchronize()
        except Exception as e:  # the evidence is the exception itself
            print("call %d: %s: %s" % (i, type(e).__name__, str(e).splitlines()[0][:300]))
            sys.exit(1)
        if not torch.is_tensor(got) or got.shape != want.shape:
            print("call %d: output shape %s, expected %s" % (
                i, getattr(got, "shape", type(got)), tuple(want.shape)))
            sys.exit(1)
        err = (got.float() - want.float()).abs().max().item()
        print("call %d: %s" % (i, "ok" if torch.allclose(got.float(), want.float(), atol=1e-2,
                                                          rtol=1e-2) else "mismatch %.3g" % err))


if __name__ == "__main__":
    main()
