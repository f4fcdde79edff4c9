"""Which part of the RL loop's except_fallback candidate turns its failing TORCH_CHECK into a
SIGSEGV? (2026-12-07 probe: it dies even in a plain try/except with no kforge around it, while
the red team's h03_except_fallback.py raises.) Each variant changes one thing of the loop's
candidate, or brings one of its things to h03, builds in its own process and prints one line.

    python3 tests/gpu/throw/variants.py         every variant, in parallel
    python3 tests/gpu/throw/variants.py --one V one variant in this process
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "rl"))


def loop_module(name, o3=True, int_msg=True, launch_check=True):
    import kernel_library
    from torch.utils.cpp_extension import load_inline
    cpp, cu = kernel_library.source("cuda", "loop")
    if not int_msg:
        cu = cu.replace('"unary: unknown op ", op);', '"unary: unknown op");')
    if not launch_check:
        cu = cu.replace("C10_CUDA_KERNEL_LAUNCH_CHECK();", "")
    return load_inline(name=name, cpp_sources=cpp, cuda_sources=cu,
                       extra_cuda_cflags=["-O3"] if o3 else [],
                       functions=kernel_library.functions("loop"), verbose=False)


def h03_module(name, o3):
    import ast
    from torch.utils.cpp_extension import load_inline
    with open(os.path.join(ROOT, "tests", "redteam", "cuda", "h03_except_fallback.py")) as f:
        tree = ast.parse(f.read())
    g = {t.targets[0].id: t.value.value for t in tree.body
         if isinstance(t, ast.Assign) and isinstance(t.value, ast.Constant)}
    return load_inline(name=name, cpp_sources=g["bad_cpp_source"], cuda_sources=g["bad_cuda_source"],
                       extra_cuda_cflags=["-O3"] if o3 else [], functions=["relu_raise"],
                       verbose=False)


VARIANTS = {
    "loop_fp16": lambda: (loop_module("v_loop"), "float16"),
    "loop_fp32": lambda: (loop_module("v_loop"), "float32"),
    "loop_no_O3": lambda: (loop_module("v_loop_noo3", o3=False), "float16"),
    "loop_plain_msg": lambda: (loop_module("v_loop_msg", int_msg=False), "float16"),
    "loop_no_launch_check": lambda: (loop_module("v_loop_nolc", launch_check=False), "float16"),
    "h03_O3": lambda: (h03_module("v_h03_o3", True), "float32"),
    "h03": lambda: (h03_module("v_h03", False), "float32"),
}


def one(v):
    import torch
    mod, dtype = VARIANTS[v]()
    x = torch.randn(1024, device="cuda", dtype=getattr(torch, dtype))
    try:
        if v.startswith("h03"):
            mod.relu_raise(x)
        else:
            mod.unary(x, -1, 0.0, 0.0)
        return "returned"
    except RuntimeError as e:
        return "raised (%s)" % str(e).splitlines()[0][:70]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--one")
    a = ap.parse_args()
    if a.one:
        print(one(a.one), flush=True)
        return
    # loop_fp32 reuses loop_fp16's build: run it after.
    first = [v for v in VARIANTS if v != "loop_fp32"]
    procs = {}
    for v in first:
        procs[v] = subprocess.Popen([sys.executable, "-X", "faulthandler", __file__, "--one", v],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = {}
    for v, p in procs.items():
        out, err = p.communicate(timeout=400)
        results[v] = (p.returncode, out, err)
    p = subprocess.run([sys.executable, "-X", "faulthandler", __file__, "--one", "loop_fp32"],
                       capture_output=True, text=True, timeout=300)
    results["loop_fp32"] = (p.returncode, p.stdout, p.stderr)
    for v in VARIANTS:
        rc, out, err = results[v]
        line = out.strip() if rc == 0 else "killed by signal %d" % -rc if rc < 0 else "exit %d" % rc
        print("%-22s %s" % (v, line), flush=True)
        if rc != 0:
            print("    " + "\n    ".join(err.strip().splitlines()[-12:]), flush=True)
    # Where the crash is, in C++: gdb's backtrace of the loop's call (its build is cached now).
    import shutil
    if shutil.which("gdb") and results["loop_fp16"][0] < 0:
        p = subprocess.run(["gdb", "-batch", "-ex", "run", "-ex", "bt 40", "--args", sys.executable,
                            __file__, "--one", "loop_fp16"], capture_output=True, text=True,
                           timeout=300)
        print("gdb backtrace of loop_fp16:\n" + "\n".join(
            l for l in p.stdout.splitlines() if l.startswith("#") or "SIG" in l)[:6000], flush=True)
    else:
        print("gdb: %s" % (shutil.which("gdb") or "not installed"), flush=True)


if __name__ == "__main__":
    main()
