#!/usr/bin/env python3
"""The judge's memory model end to end (CPU backend): a problem whose tensors are a large share
of the memory gets a verdict with every trial, the timing and the ablation call, its phases'
buffers handed back before the next phase's are made; a budget too small for even one trial
set is kforge's own failure (infra_error), never the candidate's.

The budget is $KFORGE_DEVICE_MEMORY_BUDGET (bytes), which caps what the judge plans with and
makes it fail, as an out-of-memory would, past it: on the CPU the judge's resident set above
what it started with is measured per request (docs/PROTOCOL.md, "Memory").

Usage: memory_test.py --kforge build/kforge [--python /usr/bin/python3]
"""
import os
import shutil
import sys
import tempfile

from evalcli import check
import evalcli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIB = 1 << 20
# 4096 x 4096 fp32: 64 MiB (T) in, 64 MiB out, and a shape variant as big: KernelBench's
# 19_ReLU (6 GiB in, 6 GiB out) on an 80 GiB GPU, scaled down. Kept whole, a trial set is 4T
# (buffers, pristine copy, reference); the main set and three timing sets would be 16T.
PROBLEM = '''"""ReLU on a 64 MiB input."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 4096
KFORGE_SHAPE_VARIANTS = [{"batch_size": 4097, "dim": 4099}]


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''

def evaluate(a, problem, budget, cache):
    return evalcli.evaluate(a.kforge, a.python, cache, problem,
                            os.path.join(ROOT, "examples/cpu/relu.py"),
                            env={"KFORGE_DEVICE_MEMORY_BUDGET": str(budget)})


def stage(v, name):
    return next((s for s in v["stages"] if s["name"] == name), {})


def main():
    a = evalcli.command_line()
    tmp = tempfile.mkdtemp(prefix="kforge-memory-test.")
    cache = os.environ.get("KFORGE_TEST_CACHE") or os.path.join(tmp, "cache")
    problem = os.path.join(tmp, "big_relu.py")
    with open(problem, "w") as f:
        f.write(PROBLEM)

    # 376 MiB, under 6T: a request's peak (a slot's buffers, a draw and the reference's
    # outputs: 4T, and a comparison's chunks) fits; the main slot, the shape variant's and a
    # timing set held at once, as before a big problem's phases released theirs (2026-12-05),
    # do not.
    budget = 376 * MIB
    v = evaluate(a, problem, budget, cache)
    print("with a %d MiB budget: %s" % (budget // MIB, v["status"]))
    check(v["status"] == "ok", "%d MiB budget: status %s, want ok: %s"
          % (budget // MIB, v["status"], v.get("feedback")))
    timing = stage(v, "timing")
    check(timing.get("input_sets") == 1,
          "the timing rotation shrank to one set: got %s" % timing.get("input_sets"))
    peak = stage(v, "execute").get("judge_peak_bytes", 0)
    print("the judge's peak: %.1f MiB" % (peak / MIB))
    check(0 < peak <= budget, "the judge held %d bytes at most, within %d" % (peak, budget))
    trials = stage(v, "correctness").get("trials", [])
    check(v["correct_trials"]["passed"] == v["correct_trials"]["total"] == len(trials) == 6,
          "every trial ran and passed (2 seeds, one again, one swapped, signed, the shape "
          "variant): %s" % [t.get("label") for t in trials])
    check(any(t.get("label", "").startswith("shape") for t in trials), "the shape variant ran")

    # Less than one trial set's buffers (128 MiB): kforge cannot evaluate here, and says so.
    v = evaluate(a, problem, 100 * MIB, cache)
    print("with a 100 MiB budget: %s" % v["status"])
    check(v["status"] == "infra_error",
          "100 MiB budget: status %s, want infra_error (kforge's own memory)" % v["status"])
    check(v.get("reward") is None, "no reward for kforge's own failure")
    check(any("memory budget" in d["message"] for d in v["diagnostics"]),
          "the diagnostic names the budget: %s" % [d["message"] for d in v["diagnostics"]])

    shutil.rmtree(tmp, ignore_errors=True)
    return evalcli.finish("memory test")


if __name__ == "__main__":
    sys.exit(main())
