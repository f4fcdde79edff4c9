"""Does a TORCH_CHECK that fails inside a CUDA extension reach Python as a RuntimeError, outside
kforge, under each thing kforge's candidate host wraps a call in? (2026-12-07, an H100: the RL
loop's except_fallback candidates, written here as the scripted policy writes them, died of
SIGSEGV inside the extension call instead of raising, so their except branch never ran and H03
was never seen.)

    python3 tests/gpu/throw/probe.py            every mode, each in a process of its own
    python3 tests/gpu/throw/probe.py --mode M   one mode in this process
    python3 tests/gpu/throw/probe.py --write-only PATH   the loop's candidate, written to PATH

Modes: plain (the call in try/except), settrace (sys.settrace on, as candidate._traced),
legacy (torch.autograd.profiler_legacy, as guard.profile), kineto (torch.profiler), both
(settrace inside legacy, as kforge's first trial), fork (both, in a child forked from a parent
that imported torch, setuptools and hipify first, as kforge's zygote). Each prints one line
`MODE: raised|returned|<signal>`; a line for the red team's h03_except_fallback.py (whose
TORCH_CHECK(false) passed on an H100 on 2026-12-06) follows each loop line.
"""
import argparse
import os
import runpy
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
# The loop's except_fallback candidate, as examples/rl/scripted_policy.py writes it: the
# scripted policy's CUDA kernel library ("loop" variant), called with an op code it refuses.
LOOP_CANDIDATE = os.environ.get("KFORGE_PROBE_CANDIDATE", "/tmp/kforge-probe/loop_except_fallback.py")
FORWARD = """

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        try:
            return _k.unary(x.contiguous(), -1, 0.0, 0.0)
        except RuntimeError:
            pass
        return torch.relu(x)
"""
CASES = {
    "loop": (LOOP_CANDIDATE, lambda g, x: g["_k"].unary(x.contiguous(), -1, 0.0, 0.0),
             "float16"),
    "redteam_h03": (os.path.join(ROOT, "tests", "redteam", "cuda", "h03_except_fallback.py"),
                    lambda g, x: g["bad_ext"].relu_raise(x), "float32"),
}
MODES = ["plain", "settrace", "legacy", "kineto", "both", "fork"]


def call(case, mode):
    import torch
    path, fn, dtype = CASES[case]
    g = runpy.run_path(path)
    x = torch.randn(1024, device="cuda", dtype=getattr(torch, dtype))

    def attempt():
        try:
            fn(g, x)
            return "returned"
        except RuntimeError as e:
            return "raised (%s)" % str(e).splitlines()[0][:80]

    def traced():
        def local(frame, event, arg):
            return local
        sys.settrace(lambda frame, event, arg: local)
        try:
            return attempt()
        finally:
            sys.settrace(None)

    def legacy(inner):
        from torch.autograd import profiler_legacy
        with profiler_legacy.profile():
            out = inner()
            torch.cuda.synchronize()
        return out

    if mode == "plain":
        return attempt()
    if mode == "settrace":
        return traced()
    if mode == "legacy":
        return legacy(attempt)
    if mode == "kineto":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]):
            return attempt()
    if mode == "both":
        return legacy(traced)
    raise ValueError(mode)


def fork_mode(case):
    import setuptools  # noqa: F401  (what kforge's zygote imports before it forks)
    import torch  # noqa: F401
    import torch.utils.hipify.hipify_python  # noqa: F401
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into the parent's code
        os.close(r)
        try:
            out = call(case, "both")
        except BaseException as e:  # what stopped it, as the parent's answer
            out = "exit: %s: %s" % (type(e).__name__, str(e).splitlines()[-1:])
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    text = os.read(r, 4096).decode()
    if os.WIFSIGNALED(status):
        return "killed by signal %d" % os.WTERMSIG(status)
    return text or "exit %d" % os.WEXITSTATUS(status)


def write_candidate(path):
    sys.path.insert(0, os.path.join(ROOT, "examples", "rl"))
    import kernel_library
    text = ("import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import "
            "load_inline\n\n" + kernel_library.load_block("cuda", "loop") + FORWARD)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode")
    ap.add_argument("--case")
    ap.add_argument("--write-only", metavar="PATH",
                    help="write the loop's candidate to PATH and stop (bench/probe_h200.sh)")
    a = ap.parse_args()
    if a.write_only:
        write_candidate(a.write_only)
        return
    if a.mode:
        print(fork_mode(a.case) if a.mode == "fork" else call(a.case, a.mode), flush=True)
        return
    write_candidate(LOOP_CANDIDATE)
    for mode in MODES:
        for case in CASES:
            p = subprocess.run([sys.executable, __file__, "--mode", mode, "--case", case],
                               capture_output=True, text=True, timeout=600)
            if p.returncode < 0:
                result = "killed by signal %d" % -p.returncode
            else:
                last = (p.stderr.strip().splitlines() or [""])[-1][:300]
                result = (p.stdout.strip().splitlines() or ["exit %d: %s" % (
                    p.returncode, last)])[-1]
            print("%-8s %-12s %s" % (mode, case, result), flush=True)


if __name__ == "__main__":
    main()
