#!/usr/bin/env python3
"""Where a timed call's time goes: kforge's timing loop against KernelBench's, on one GPU.

Runs in one process with the machine's CUDA PyTorch (no kforge binary): builds kforge's timing
helper as it is now (`--native-new`, default runner/native/kforge_native.cpp) and, optionally,
an older one (`--native-old`), and a candidate (`--candidate`, a load_inline file), then times
the candidate's ModelNew and the problem's eager Model on the problem's inputs with

  kb        KernelBench's own cuda_event timing (`--kb-timing path/to/KernelBench/src/kernelbench/
            timing.py`: events around the call after a 256 MiB fill, mean of 100 trials)
  old*      the older helper's run_batch (flush, sync, events around the call); variants
            without the extension proxy kforge hands candidates (old_raw) and without the
            flush (old_noflush)
  new*      the current helper's run_batch; new_d50 with a 50 us GPU sleep before the start
            event, new_raw without the proxy

each R times (`--reps`) over 100 calls, idle and then with every CPU busy (`--load`), and
writes one JSON line per measurement (median and mean per call, host time, hidden calls) to
OUT/probe.jsonl and a table to stdout. `--ncu-run` instead makes plain calls only, for
`ncu --metrics gpu__time_duration.sum` (bench/timing_h200.sh does both).
"""
import argparse
import concurrent.futures as cf
import importlib.util
import json
import multiprocessing as mp
import os
import statistics
import sys
import time
import types

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "runner"))


def build_native(path, name, build_dir):
    import torch.utils.cpp_extension as ce
    os.makedirs(build_dir, exist_ok=True)
    return ce.load(name=name, sources=[path], extra_cflags=["-O2", "-DKFORGE_WITH_CUDA"],
                   with_cuda=True, build_directory=build_dir, verbose=False)


def load_problem(path, sizes):
    ns = {"__name__": "problem"}
    exec(compile(open(path).read(), path, "exec"), ns)
    for k, v in sizes.items():
        ns[k] = v
    return ns


def load_candidate(path, problem_ns, build_dir):
    """Executes the candidate in the problem's namespace (as KernelBench does); load_inline
    builds into build_dir."""
    import torch.utils.cpp_extension as ce
    real = ce.load_inline

    def load_inline(*a, **k):
        k.setdefault("build_directory", build_dir)
        os.makedirs(k["build_directory"], exist_ok=True)
        return real(*a, **k)
    ce.load_inline = load_inline
    ns = dict(problem_ns)
    ns["__name__"] = "candidate"
    try:
        exec(compile(open(path).read(), path, "exec"), ns)
    finally:
        ce.load_inline = real
    return ns


def proxied(ns):
    """The candidate's namespace with each extension module behind kforge's ExtensionProxy."""
    from kforge_runner import guard
    state = {"calls": 0, "ablate": False}
    out = dict(ns)
    for k, v in ns.items():
        if isinstance(v, types.ModuleType) and str(getattr(v, "__file__", "")).endswith(".so"):
            out[k] = guard.ExtensionProxy(v, state)
    return out


def make_model(ns, cls, device):
    torch.manual_seed(0)
    m = ns[cls](*ns["get_init_inputs"]())
    return m.to(device) if isinstance(m, torch.nn.Module) else m


def make_pool(ns, device, n=3):
    sets = []
    for i in range(n):
        torch.manual_seed(100 + i)
        sets.append([x.to(device) if isinstance(x, torch.Tensor) else x for x in ns["get_inputs"]()])
    return sets


def rebind(model, ns):
    """ModelNew's forward reads module globals: point its globals at ns (proxied or not)."""
    fwd = type(model).forward
    g = types.FunctionType(fwd.__code__, ns, fwd.__name__, fwd.__defaults__, fwd.__closure__)
    model.forward = types.MethodType(g, model)
    return model


def busy():
    while True:
        pass


def summary(ms):
    return {"median_ms": statistics.median(ms), "mean_ms": statistics.fmean(ms),
            "min_ms": min(ms), "n": len(ms)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem", required=True)
    ap.add_argument("--candidate", required=True)
    ap.add_argument("--sizes", default="{}", help="JSON of module globals to override")
    ap.add_argument("--tag", default="")
    ap.add_argument("--kb-timing", default="")
    ap.add_argument("--native-new", default=os.path.join(ROOT, "runner/native/kforge_native.cpp"))
    ap.add_argument("--native-old", default="")
    ap.add_argument("--build", default="/tmp/kforge-probe")
    ap.add_argument("--out", default="")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--load", action="store_true")
    ap.add_argument("--ncu-run", action="store_true")
    a = ap.parse_args()
    dev = torch.device("cuda:0")
    torch.cuda.set_device(dev)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_grad_enabled(False)
    pns = load_problem(a.problem, json.loads(a.sizes))
    t0 = time.time()
    with cf.ThreadPoolExecutor(3) as ex:
        fut_new = ex.submit(build_native, a.native_new, "kforge_native_new", a.build + "/new")
        fut_old = ex.submit(build_native, a.native_old, "kforge_native_old", a.build + "/old") \
            if a.native_old else None
        cns = load_candidate(a.candidate, pns, a.build + "/cand")
        new = fut_new.result()
        old = fut_old.result() if fut_old else None
    print("built in %.1f s" % (time.time() - t0), flush=True)
    cand = make_model(cns, "ModelNew", dev)
    eager = make_model(pns, "Model", dev)
    pool = make_pool(pns, dev)
    if a.ncu_run:
        for _ in range(20):
            cand(*pool[0])
        torch.cuda.synchronize()
        for _ in range(20):
            eager(*pool[0])
        torch.cuda.synchronize()
        return
    raw_ns, proxy_ns = cns, proxied(cns)
    kb = None
    if a.kb_timing:
        spec = importlib.util.spec_from_file_location("kb_timing", a.kb_timing)
        kb = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(kb)
    out = open(os.path.join(a.out, "probe.jsonl"), "a") if a.out else None
    state0 = dict(new.gpu_state(0)) if hasattr(new, "gpu_state") else {}

    def run_native(mod, fn, flush=True, delay=0.0):
        for _ in range(3):  # warm-up
            fn(*pool[0])
        torch.cuda.synchronize()
        r = mod.run_batch(fn, pool, 0, a.calls, flush, True, None, *([delay] if mod is new else []))
        res = summary(list(r[0]))
        if len(r) >= 5:
            res["host_median_ms"] = statistics.median(r[3])
            res["hidden"] = int(r[4])
        res["wall_median_ms"] = statistics.median(r[1])
        return res

    def run_kb(fn):
        ms = kb.time_execution_with_cuda_event(fn, pool[0], num_warmup=3, num_trials=a.calls,
                                               discard_first=1, verbose=False, device=dev)
        return summary(ms)

    methods = []
    if kb is not None:
        methods.append(("kb", lambda fn: run_kb(fn)))
    if old is not None:
        methods += [("old", lambda fn: run_native(old, fn)),
                    ("old_noflush", lambda fn: run_native(old, fn, flush=False))]
    methods += [("new", lambda fn: run_native(new, fn)),
                ("new_d50", lambda fn: run_native(new, fn, delay=50.0))]
    targets = [("candidate", rebind(cand, proxy_ns)), ("eager", eager)]
    phases = ["idle"] + (["loaded"] if a.load else [])
    rows = []
    for phase in phases:
        procs = []
        if phase == "loaded":
            procs = [mp.Process(target=busy, daemon=True) for _ in range(os.cpu_count() or 4)]
            for p in procs:
                p.start()
            time.sleep(0.5)
        try:
            for rep in range(a.reps):
                for tname, fn in targets:
                    for mname, run in methods:
                        r = run(fn)
                        r.update({"tag": a.tag, "phase": phase, "rep": rep, "target": tname,
                                  "method": mname})
                        rows.append(r)
                        if out:
                            out.write(json.dumps(r) + "\n")
                            out.flush()
                # the proxy's own cost: the candidate without it
                for mname, mod in (("old_raw", old), ("new_raw", new)):
                    if mod is None:
                        continue
                    r = run_native(mod, rebind(cand, raw_ns))
                    r.update({"tag": a.tag, "phase": phase, "rep": rep, "target": "candidate",
                              "method": mname})
                    rows.append(r)
                    if out:
                        out.write(json.dumps(r) + "\n")
                rebind(cand, proxy_ns)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.join()
    state1 = dict(new.gpu_state(0)) if hasattr(new, "gpu_state") else {}
    print("gpu state before %s\ngpu state after  %s" % (state0, state1))
    print("%-8s %-9s %-12s %9s %9s %9s %9s %7s" % ("phase", "target", "method", "med_us",
                                                   "min..max", "mean_us", "host_us", "hidden"))
    keys = sorted({(r["phase"], r["target"], r["method"]) for r in rows})
    for k in keys:
        rs = [r for r in rows if (r["phase"], r["target"], r["method"]) == k]
        meds = [r["median_ms"] * 1000 for r in rs]
        mean = statistics.fmean(r["mean_ms"] * 1000 for r in rs)
        host = [r.get("host_median_ms", 0) * 1000 for r in rs]
        hid = [r.get("hidden", -1) for r in rs]
        print("%-8s %-9s %-12s %9.2f %4.1f..%-4.1f %9.2f %9.1f %7s" % (
            k[0], k[1], k[2], statistics.median(meds), min(meds), max(meds), mean,
            statistics.median(host), min(hid)))
    if out:
        out.write(json.dumps({"tag": a.tag, "gpu_state": [state0, state1]}) + "\n")


if __name__ == "__main__":
    main()
