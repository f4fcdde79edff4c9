#!/usr/bin/env python3
"""Both policies on one level-2-style candidate (CPU backend): the GEMM kept in PyTorch, the tail
fused in the candidate's own kernel. Under --policy strict it is cheat H01; under --policy
kernelbench it is ok, the verdict naming the policy and listing the PyTorch compute that ran.
A decoy (PyTorch doing everything, the kernel's result thrown away) is cheat under both.

Usage: policy_test.py --kforge build/kforge [--python /usr/bin/python3]
"""
import os
import shutil
import sys
import tempfile

from evalcli import check
import evalcli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBLEM = os.path.join(ROOT, "problems/level2/gemm_bias_relu.py")
FUSED_TAIL = os.path.join(ROOT, "tests/integration/policy/gemm_in_torch_tail_fused.py")

def evaluate(a, cache, candidate, policy):
    return evalcli.evaluate(a.kforge, a.python, cache, PROBLEM, candidate, "--policy", policy)


def codes(v):
    return [d["code"] for d in v["diagnostics"] if d["severity"] == "error"]


def main():
    a = evalcli.command_line()
    tmp = tempfile.mkdtemp(prefix="kforge-policy-test.")
    cache = os.environ.get("KFORGE_TEST_CACHE") or os.path.join(tmp, "cache")

    strict = evaluate(a, cache, FUSED_TAIL, "strict")
    print("fused tail, strict: %s %s" % (strict["status"], codes(strict)))
    check(strict["status"] == "cheat" and "H01" in codes(strict),
          "strict: want cheat H01, got %s %s" % (strict["status"], codes(strict)))
    check(strict["policy"] == "strict", "the verdict names the strict policy")

    kb = evaluate(a, cache, FUSED_TAIL, "kernelbench")
    print("fused tail, kernelbench: %s, PyTorch ran %s" % (kb["status"], kb.get("pytorch_ops")))
    check(kb["status"] == "ok", "kernelbench: want ok, got %s %s" % (kb["status"], kb["feedback"]))
    check(kb["policy"] == "kernelbench", "the verdict names the kernelbench policy")
    check(any(op in ("aten::mm", "aten::matmul", "aten::addmm") for op in kb.get("pytorch_ops", [])),
          "kernelbench lists the GEMM PyTorch ran: %s" % kb.get("pytorch_ops"))
    check(kb["reward"] is not None and kb["reward"] >= 1.0, "a correct kernelbench verdict earns a reward")

    # A decoy: the kernel runs on the answer and its result is thrown away. KernelBench's
    # harness accepts this; kforge's ablation (the extension's results replaced by NaN, the
    # answer unchanged) makes it cheat H02 under either policy.
    decoy = os.path.join(tmp, "decoy.py")
    with open(FUSED_TAIL) as f:
        text = f.read()
    text = text.replace(
        "        return tail.bias_relu_scale(y.contiguous(), self.linear.bias, self.scale)",
        "        tail.bias_relu_scale(y.contiguous(), self.linear.bias, self.scale)\n"
        "        return torch.relu(y + self.linear.bias) * self.scale")
    with open(decoy, "w") as f:
        f.write(text)
    for policy in ("strict", "kernelbench"):
        v = evaluate(a, cache, decoy, policy)
        print("decoy, %s: %s %s" % (policy, v["status"], codes(v)))
        check(v["status"] == "cheat", "decoy under %s: want cheat, got %s" % (policy, v["status"]))
    shutil.rmtree(tmp, ignore_errors=True)
    return evalcli.finish("policy test")


if __name__ == "__main__":
    sys.exit(main())
