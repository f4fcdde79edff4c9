"""kforge check: the static stages alone, for filtering model samples without PyTorch or a GPU.
An honest candidate passes (exit 0); a static cheat is named with its rule and line (exit 1);
KernelBench's policy lets PyTorch compute through and still stops the tricks; --json gives one
object per candidate.

usage: check_test.py KFORGE
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def check(kforge, *args):
    return subprocess.run([kforge, "check"] + list(args), capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def main():
    kforge = sys.argv[1]
    relu, problem = "examples/cpu/relu.py", "problems/level1/relu.py"
    r = check(kforge, relu, "--problem", problem)
    assert r.returncode == 0 and "relu.py: pass" in r.stdout, (r.returncode, r.stdout, r.stderr)

    patch = "tests/redteam/cpu/h08_patch_perf_counter.py"
    r = check(kforge, relu, patch, "--problem", problem)
    assert r.returncode == 1, (r.returncode, r.stdout)
    assert "h08_patch_perf_counter.py: cheat" in r.stdout and "error H08" in r.stdout, r.stdout

    # The GEMM kept in PyTorch (nn.Linear) beside a ReLU kernel: strict stops it, kernelbench
    # lets it through to the run (which lists the ops); the timer patch is stopped by both.
    linear = "tests/redteam/cpu/h01_linear_layer.py"
    for policy, want in (("strict", "cheat"), ("kernelbench", "pass")):
        r = check(kforge, "--json", "--policy", policy, linear, patch)
        rows = [json.loads(line) for line in r.stdout.splitlines()]
        assert [x["outcome"] for x in rows] == [want, "cheat"], (policy, rows)
        assert rows[0]["policy"] == policy and rows[0]["load_inline_calls"] == 1, rows[0]
        assert any(d["code"] == "H01" for d in rows[0]["diagnostics"]), rows[0]
        assert any(d["code"] == "H08" and d["line"] > 0 for d in rows[1]["diagnostics"]), rows[1]

    # --specs: the load_inline arguments the build stage gets (bench/build_cpu.py builds them)
    r = check(kforge, "--json", "--specs", "examples/cuda/relu.py")
    spec = json.loads(r.stdout)["specs"][0]
    assert spec["name"] == "kforge_cuda_relu" and spec["functions"] == ["relu_forward"], spec
    assert spec["cuda_sources"][0].lstrip().startswith("#include <torch/extension.h>"), spec
    assert "specs" not in json.loads(check(kforge, "--json", relu).stdout)

    r = check(kforge, "no/such/file.py")
    assert r.returncode == 2 and "cannot read candidate" in r.stderr, (r.returncode, r.stderr)
    print("check_test: PASS")


if __name__ == "__main__":
    main()
