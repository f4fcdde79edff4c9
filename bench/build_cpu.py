#!/usr/bin/env python3
"""CPU seconds per build, plain and with --light-headers: builds each candidate's load_inline
calls both ways, one build at a time, through kforge's own build worker
(runner/kforge_runner/build_worker.py: torch's builder in a sandboxed child, the precompiled
header for main.cpp, the light attempt and its fall-back), and reports the CPU each build used
(the worker's wait4 of the build: ninja and every compiler, as build.cpu_ms in a verdict) and
how many light builds fell back.

  bench/build_cpu.py [--backend cpu|cuda] [--kforge build/kforge] [--python PY] [--out JSON]
                     [--repeat R] [--jobs N] [--keep DIR] [--no-pch] CANDIDATE...

The calls are the ones kforge resolves statically (`kforge check --json --specs`). Each
candidate is built as written and light, in alternating order (so a change of the machine's
load falls on both), each in a fresh folder: nothing comes from kforge's artifact cache. Both
ways share one precompiled header, made (and waited for) before the first measured build. A
light request is sent only where kforge sends one (a CUDA source mentions torch/extension.h);
elsewhere the two builds are the same request, and the pair shows the noise. --jobs N builds N
candidates at a time (N workers; CPU seconds are still each build's own, but contention inflates
them, as in a bench); --keep DIR keeps the build folders as DIR/plain/<i> and DIR/light/<i>
(bench/sass_identity.py --pairs OUT.json then compares the two builds' objects).
"""
import argparse
import glob
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "runner"))
from kforge_runner import protocol  # noqa: E402  (standard library only)
from kforge_runner.channel import Channel  # noqa: E402  (standard library only)
sys.path.insert(0, os.path.join(ROOT, "bench"))
import sass_identity  # noqa: E402  (kforge check --specs, shared)


def specs_of(kforge, candidates):
    return sass_identity.checked_specs(kforge, candidates, cwd=ROOT)


def may_apply(spec):
    """build::LightHeadersMayApply: what makes kforge send a light request."""
    return any("torch/extension.h" in s for s in spec.get("cuda_sources") or [])


class Worker:
    """One build worker, started the way src/build/builder.cc starts it."""

    def __init__(self, python, kforge):
        ours, theirs = socket.socketpair()
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "runner"), PYTHONDONTWRITEBYTECODE="1")
        lib = os.path.join(os.path.dirname(os.path.abspath(kforge)), "libkforge_sandbox.so")
        if os.path.exists(lib):
            env["KFORGE_SANDBOX_LIB"] = lib
        fd = theirs.fileno()
        self.log = tempfile.NamedTemporaryFile(prefix="kforge-build-worker-", suffix=".log", delete=False)
        # Its own session: the worker kills its process group when its channel closes.
        self.proc = subprocess.Popen([python, "-m", "kforge_runner.build_worker", "--fd", str(fd)],
                                     pass_fds=(fd,), env=env, stdout=self.log, stderr=self.log,
                                     start_new_session=True)
        theirs.close()
        self.chan = Channel(ours.detach())

    def ask(self, msg):
        self.chan.send(msg)
        return self.chan.recv()

    def close(self):
        try:
            self.chan.send({"op": "exit"})
        except OSError:
            pass
        self.proc.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("candidates", nargs="+")
    ap.add_argument("--backend", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3",
                    help="the interpreter that has PyTorch")
    ap.add_argument("--repeat", type=int, default=1, help="builds of each call each way")
    ap.add_argument("--no-pch", action="store_true", help="main.cpp without the precompiled header")
    ap.add_argument("--jobs", type=int, default=1, help="candidates built at the same time")
    ap.add_argument("--keep", default="", help="keep the build folders under DIR/plain and DIR/light")
    ap.add_argument("--out", default="", help="write every build's numbers here (JSON)")
    a = ap.parse_args()
    todo = specs_of(a.kforge, a.candidates)
    if not todo:
        sys.exit("no statically resolved load_inline call in the candidates")
    work = tempfile.mkdtemp(prefix="kforge-build-cpu-")
    probe = {"headers": [], "libraries": []}
    workers = [Worker(a.python, a.kforge) for _ in range(max(1, a.jobs))]
    rows = []
    lock = threading.Lock()
    n = [0]
    try:
        hello = workers[0].ask({"op": "hello", "backend": a.backend, "probe": probe,
                                "protocol": protocol.VERSION})
        if not hello.get("ok"):
            sys.exit("build worker: " + hello.get("message", "refused"))
        arch = hello["fingerprint"].get("arch", "")
        pch_dir = "" if a.no_pch else os.path.join(work, "pch")

        def build(w, spec, light, make_pch=False):
            with lock:
                n[0] += 1
                i = n[0]
            d = os.path.join(work, "b%d" % i)
            os.makedirs(d)
            msg = {"op": "build", "dir": d, "spec": spec, "arch": arch, "pch_dir": pch_dir,
                   "pch_make": make_pch, "probe": probe, "light_dir": os.path.join(work, "light")}
            if light and may_apply(spec):
                msg["light_headers"] = True
            r = w.ask(msg)
            if a.keep and not make_pch:
                dest = os.path.abspath(os.path.join(a.keep, "light" if light else "plain", str(i)))
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.move(d, dest)
                r["kept"] = dest
            shutil.rmtree(d, ignore_errors=True)
            return r

        if pch_dir:  # the PCH, made once for both ways, before anything is measured
            build(workers[0], todo[0][1], False, make_pch=True)
            t0 = time.monotonic()
            while time.monotonic() - t0 < 600 and not glob.glob(os.path.join(pch_dir, "[0-9a-f]" * 32)) \
                    and not glob.glob(os.path.join(pch_dir, "*.failed")):
                time.sleep(1)
        jobs = [(rep, i, name, spec) for rep in range(a.repeat) for i, (name, spec) in enumerate(todo)]

        def serve(w):
            while True:
                with lock:
                    if not jobs:
                        return
                    rep, i, name, spec = jobs.pop(0)
                order = [False, True] if (i + rep) % 2 == 0 else [True, False]
                got = {}
                for light in order:
                    got[light] = build(w, spec, light)
                plain, lit = got[False], got[True]
                row = {"candidate": name, "repeat": rep, "applies": may_apply(spec),
                       "cpu_s": round(plain["cpu_s"], 2), "ok": plain.get("ok", False),
                       "pch": plain.get("pch", ""),
                       "light_cpu_s": round(lit["cpu_s"], 2), "light_ok": lit.get("ok", False),
                       "light_headers": lit.get("light_headers", "unchanged"),
                       "light_pch": lit.get("pch", "")}
                if lit.get("light_headers_why"):
                    row["why"] = lit["light_headers_why"]
                if "kept" in plain:  # bench/sass_identity.py --pairs compares their objects
                    row.update(plain_dir=plain["kept"], light_dir=lit["kept"])
                with lock:
                    rows.append(row)
                    print("%-48s %6.1f -> %6.1f CPU-s  %-9s%s%s" % (
                        name[-48:], row["cpu_s"], row["light_cpu_s"], row["light_headers"],
                        "" if row["ok"] == row["light_ok"] else
                        "  OUTCOME DIFFERS (%s / %s)" % (row["ok"], row["light_ok"]),
                        "  (%s)" % row["why"][:100] if "why" in row else ""), flush=True)

        threads = [threading.Thread(target=serve, args=(w,)) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for w in workers:
            w.close()
        shutil.rmtree(work, ignore_errors=True)
    tried = [r for r in rows if r["light_headers"] in ("used", "fell_back")]
    summary = {
        "builds_each_way": len(rows),
        "cpu_s_per_build": round(statistics.mean(r["cpu_s"] for r in rows), 2),
        "light_cpu_s_per_build": round(statistics.mean(r["light_cpu_s"] for r in rows), 2),
        "light_tried": len(tried),
        "light_used": sum(r["light_headers"] == "used" for r in rows),
        "light_fell_back": sum(r["light_headers"] == "fell_back" for r in rows),
        "fell_back_fraction": round(sum(r["light_headers"] == "fell_back" for r in tried) / len(tried), 3) if tried else None,
        "outcome_differs": sum(r["ok"] != r["light_ok"] for r in rows),
        "backend": a.backend,
        "pch": not a.no_pch,
        "jobs": a.jobs,
    }
    if tried:
        summary["tried_cpu_s_per_build"] = round(statistics.mean(r["cpu_s"] for r in tried), 2)
        summary["tried_light_cpu_s_per_build"] = round(statistics.mean(r["light_cpu_s"] for r in tried), 2)
    print("summary: " + json.dumps(summary))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"summary": summary, "builds": rows}, f, indent=1)
    return 1 if summary["outcome_differs"] else 0


if __name__ == "__main__":
    sys.exit(main())
