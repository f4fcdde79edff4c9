"""Shared by the small end-to-end tests of one `kforge eval` feature (memory_test.py,
policy_test.py): a check that records failures, and a quick CPU evaluation as JSON."""
import argparse
import json
import os
import subprocess

failures = []


def command_line():
    """The arguments every such test takes: --kforge (the binary) and --python (the runner's
    interpreter, $KFORGE_PYTHON or /usr/bin/python3)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--python", default=os.environ.get("KFORGE_PYTHON", "/usr/bin/python3"))
    return ap.parse_args()


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def finish(name):
    """The exit code: 1 when a check failed."""
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("%s: all checks passed" % name)
    return 0


def evaluate(kforge, python, cache, problem, candidate, *flags, env=None, baselines=False):
    """One CPU verdict, quick: 2 trials, a 300 ms timing budget, no baselines unless asked."""
    cmd = [kforge, "eval", "--json", "--backend", "cpu", "--python", python, "--cache", cache,
           "--problem", problem, "--candidate", candidate, "--timing-budget-ms", "300",
           "--trials", "2", *flags] + ([] if baselines else ["--no-baselines"])
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    try:
        return json.loads(p.stdout)
    except ValueError:
        print(p.stdout, p.stderr)
        raise
