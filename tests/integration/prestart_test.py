#!/usr/bin/env python3
"""--prestart-host end to end (CPU backend): a bench whose lane forks the next candidate's host
as each run begins. Every run after the first takes the spare forked during the run before it
(the verdict's execute.host_prestarted), a candidate that crashes its host leaves the spare
beside it untouched for the next one, statuses are the candidates' own, and when kforge exits
no host is left running and no host's folder is left behind. And `kforge eval` with the flag
(one candidate: its spare is forked and never used) leaves nothing behind either.

Usage: prestart_test.py --kforge build/kforge [--python /usr/bin/python3]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import evalcli
from evalcli import check, finish

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (sample, example, expected status), evaluated in this order on one lane.
SAMPLES = [
    ("sample_0.py", "examples/cpu/relu.py", "ok"),
    ("sample_1.py", "examples/cpu/broken/crash.py", "runtime_error"),
    ("sample_2.py", "examples/cpu/relu.py", "ok"),
    ("sample_3.py", "examples/cpu/relu_guarded.py", "ok"),
]


def leftovers(cache):
    """Host folders under the lanes' work folders, and processes still working in them."""
    folders = []
    for dirpath, dirnames, _ in os.walk(os.path.join(cache, "work")):
        folders += [os.path.join(dirpath, d) for d in dirnames if d.startswith("cand-")]
    procs = []  # hosts work in their folders: any process whose folder is under the cache
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % pid)
        except OSError:
            continue
        if cwd.startswith(cache):
            procs.append("%s in %s" % (pid, cwd))
    return folders, procs


def main():
    a = evalcli.command_line()
    tmp = tempfile.mkdtemp(prefix="kf-prestart-")
    cache = os.path.join(tmp, "cache")
    try:
        os.makedirs(os.path.join(tmp, "problems/level1"))
        shutil.copy(os.path.join(ROOT, "problems/level1/relu.py"),
                    os.path.join(tmp, "problems/level1"))
        os.makedirs(os.path.join(tmp, "samples/level1/relu"))
        for name, src, _ in SAMPLES:
            code = open(os.path.join(ROOT, src)).read()
            with open(os.path.join(tmp, "samples/level1/relu", name), "w") as f:
                f.write(code + "\n# %s\n" % name)  # distinct texts: each one evaluated
        cmd = [a.kforge, "bench", "--backend", "cpu", "--python", a.python, "--cache", cache,
               "--problems", os.path.join(tmp, "problems/level1"), "--samples",
               os.path.join(tmp, "samples"), "--out", os.path.join(tmp, "out"),
               "--timing-budget-ms", "300", "--trials", "2", "--no-baselines",
               "--prestart-host"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        check(p.returncode == 0, "kforge bench --prestart-host exit code %d:\n%s%s"
              % (p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
        verdicts = {}
        out = os.path.join(tmp, "out/verdicts.jsonl")
        with open(out) if os.path.exists(out) else open(os.devnull) as f:
            for line in f:
                if line.strip():
                    v = json.loads(line)
                    verdicts[os.path.basename(v["sample"])] = v["verdict"]
        hosts = []
        for name, src, want in SAMPLES:
            v = verdicts.get(name)
            check(v is not None, "%s has a verdict" % name)
            if v is None:
                continue
            check(v["status"] == want, "%s (%s): %s, want %s; %s"
                  % (name, src, v["status"], want, v.get("feedback", "")[:600]))
            ex = next((s for s in v["stages"] if s["name"] == "execute"), None)
            check(ex is not None and "host_prestarted" in ex,
                  "%s: the execute stage says whether its host was prestarted" % name)
            if ex is not None:
                hosts.append(bool(ex.get("host_prestarted")))
        # One lane: the first run forks its own host; each later run takes the spare forked
        # while the run before it ran, the crashed candidate's included.
        check(hosts.count(False) == 1 and hosts.count(True) == len(SAMPLES) - 1,
              "every run but the first took a prestarted host: %s" % hosts)
        folders, procs = leftovers(cache)
        check(not folders, "no host folder left behind: %s" % folders)
        check(not procs, "no process left running: %s" % procs)

        # One candidate: the spare is forked and stopped unused.
        v = evalcli.evaluate(a.kforge, a.python, cache, os.path.join(ROOT, "problems/level1/relu.py"),
                             os.path.join(ROOT, "examples/cpu/relu.py"), "--prestart-host")
        check(v["status"] == "ok", "kforge eval --prestart-host: %s" % v["status"])
        folders, procs = leftovers(cache)
        check(not folders, "eval: no host folder left behind: %s" % folders)
        check(not procs, "eval: no process left running: %s" % procs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish("prestart_test")


if __name__ == "__main__":
    sys.exit(main())
