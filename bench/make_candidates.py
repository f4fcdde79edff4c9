#!/usr/bin/env python3
"""Generates a bench workload for measuring kforge itself (bench/throughput.sh).

Takes our honest example candidates for one backend (examples/<backend>/*.py, each naming its
problem in a `# kforge-problem:` header) and writes:
  OUT/problems/<level>/<name>_c<j>.py   each problem copied --problem-copies times, with a
                                        comment line added so every copy is its own problem
                                        (own hash, own baselines, own judge load)
  OUT/samples/<level>/<name>_c<j>/sample_<i>.py
                                        --candidates candidates in all, round-robin over the
                                        problem copies; each one's kernel sources carry a
                                        distinct comment, so each needs its own build
The comment changes no behaviour: every candidate is as correct and as fast as its example.
"""
import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--candidates", type=int, default=100)
    ap.add_argument("--problem-copies", type=int, default=2,
                    help="copies of each example's problem (our 9 examples x 2 = 18 problems)")
    ap.add_argument("--only", default="", help="comma-separated example names to use (default: all)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    examples = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", a.backend, "*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        if a.only and name not in a.only.split(","):
            continue
        text = open(path).read()
        m = re.search(r"^# kforge-problem: (\S+)", text, re.M)
        e = re.search(r"^# kforge-expect: (\S+)", text, re.M)
        if not m or not e or e.group(1) != "ok":
            continue
        examples.append((m.group(1), text))
    if not examples:
        sys.exit("no honest examples found for backend " + a.backend)

    problems = []  # (level, stem, candidate text)
    for rel, text in examples:
        level, fname = rel.split("/")
        src = open(os.path.join(ROOT, "problems", rel)).read()
        for j in range(a.problem_copies):
            stem = "%s_c%d" % (os.path.splitext(fname)[0], j)
            d = os.path.join(a.out, "problems", level)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, stem + ".py"), "w") as f:
                f.write("# kforge bench workload: copy %d of problems/%s\n%s" % (j, rel, src))
            problems.append((level, stem, text))

    order = []  # sample paths in generation order: a prefix of it is a smaller, spread workload
    for i in range(a.candidates):
        level, stem, text = problems[i % len(problems)]
        sample = i // len(problems)
        # A comment at the top of every kernel source string: a distinct build per candidate.
        marker = "// kforge bench variant %d\n" % i
        varied, n = re.subn(r'(= r""")\n', lambda m: m.group(1) + "\n" + marker, text)
        if n == 0:
            sys.exit("no kernel source string found in the example for " + stem)
        d = os.path.join(a.out, "samples", level, stem)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "sample_%d.py" % sample), "w") as f:
            f.write(varied)
        order.append(os.path.join(level, stem, "sample_%d.py" % sample))
    with open(os.path.join(a.out, "order.txt"), "w") as f:
        f.write("".join(p + "\n" for p in order))
    print("%d candidates over %d problems in %s" % (a.candidates, len(problems), a.out))


if __name__ == "__main__":
    main()
