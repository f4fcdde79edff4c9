"""Writes tests/data/fixtures/ from real runs: `kforge generate` against the scripted model
server of tests/generate, and `kforge bench`, both on the CPU backend.

    /usr/bin/python3 tests/data/make_fixtures.py [build/kforge]

The fixtures are committed (test_data.py reads them, so CI compiles no kernel for it); run this
again after a change to the trajectory or verdict records. Paths inside verdicts.jsonl are made
relative to the fixture folder. It compiles five CPU kernels (minutes on a loaded machine).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "generate"))
from fake_model_server import FakeModelServer  # noqa: E402
import kernels  # noqa: E402

KFORGE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "kforge")
OUT = os.path.join(HERE, "fixtures")
CACHE = os.path.join(tempfile.gettempdir(), "kforge-data-fixture-cache")
EVAL = ["--backend", "cpu", "--python", "/usr/bin/python3", "--cache", CACHE, "--trials", "2",
        "--timing-budget-ms", "100", "--build-workers", "2"]


def reply(code, thought="I will write a C++ loop."):
    return "<think>%s</think>\nHere is my kernel.\n\n```python\n%s```\n" % (thought, code)


def generate(name, problem, replies, turns):
    out = os.path.join(OUT, "generate", name)
    os.makedirs(out, exist_ok=True)
    with FakeModelServer([reply(r) for r in replies]) as server:
        r = subprocess.run([KFORGE, "generate", "--problem", os.path.join(ROOT, problem),
                            "--model-url", server.url, "--model", "fake-coder", "--samples", "1",
                            "--turns", str(turns), "--seed", "3", "--retries", "0", "--out", out]
                           + EVAL, capture_output=True, text=True, timeout=1800)
    print(name, r.returncode, r.stdout.strip().splitlines()[:4])
    for f in ("best.py", "best.json"):
        if os.path.exists(os.path.join(out, f)):
            os.remove(os.path.join(out, f))


def bench():
    samples = os.path.join(OUT, "bench", "samples")
    for problem, codes in (("relu", [kernels.RELU, kernels.RELU_WRONG, kernels.RELU_UNROLLED,
                                     kernels.RELU_NO_COMPILE]),
                           ("softmax", [kernels.SOFTMAX, kernels.SOFTMAX_WRONG])):
        d = os.path.join(samples, "level1", problem)
        os.makedirs(d, exist_ok=True)
        for i, code in enumerate(codes):
            with open(os.path.join(d, "sample_%d.py" % i), "w") as f:
                f.write(code)
    problems = os.path.join(tempfile.mkdtemp(prefix="kforge-fixture-problems-"), "level1")
    os.makedirs(problems)
    for p in ("relu.py", "softmax.py"):
        shutil.copy(os.path.join(ROOT, "problems", "level1", p), problems)
    report = tempfile.mkdtemp(prefix="kforge-fixture-bench-")
    r = subprocess.run([KFORGE, "bench", "--problems", problems, "--samples", samples,
                        "--out", report, "--no-reuse"] + EVAL,
                       capture_output=True, text=True, timeout=1800)
    print("bench", r.returncode, r.stdout.strip().splitlines()[-3:])
    bench_dir = os.path.join(OUT, "bench")
    lines = []
    with open(os.path.join(report, "verdicts.jsonl")) as f:
        for line in f:
            rec = json.loads(line)
            rec["sample"] = os.path.relpath(rec["sample"], bench_dir)
            rec["problem_path"] = os.path.relpath(
                os.path.join(ROOT, "problems", "level1", os.path.basename(rec["problem_path"])),
                bench_dir)
            lines.append(json.dumps(rec, sort_keys=True))
    with open(os.path.join(bench_dir, "verdicts.jsonl"), "w") as f:
        f.write("\n".join(sorted(lines)) + "\n")


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    relu, softmax = "problems/level1/relu.py", "problems/level1/softmax.py"
    generate("relu_repair", relu, [kernels.RELU_NO_COMPILE, kernels.RELU_WRONG, kernels.RELU], 3)
    generate("relu_unrolled", relu, [kernels.RELU_UNROLLED], 2)
    generate("relu_renamed", relu, [kernels.RELU_RENAMED], 2)
    generate("relu_fail", relu, [kernels.RELU_WRONG], 2)
    generate("softmax", softmax, [kernels.SOFTMAX], 2)
    bench()


if __name__ == "__main__":
    main()
