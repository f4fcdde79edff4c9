#!/usr/bin/env python3
"""Light headers (the default) against --plain-headers end to end on the CPU backend: a candidate
gets the same verdict both ways. On the CPU backend nothing is rewritten (the light rewrite
touches only cuda.cu, and a CPU candidate has none; main.cpp keeps torch/extension.h for its
bindings), so the build stage says "unchanged" and the artifact is the plain build's (the same
key: built once, a cache hit the second time). The verdict has one key either way
(src/eval/keys_test.cc).

Usage: light_headers_test.py --kforge build/kforge [--python /usr/bin/python3]
"""
import os
import shutil
import sys
import tempfile

from evalcli import check
import evalcli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_stage(v):
    return next((s for s in v["stages"] if s["name"] == "build"), {})


def main():
    a = evalcli.command_line()
    tmp = tempfile.mkdtemp(prefix="kforge-light-test.")
    cache = os.path.join(tmp, "cache")
    try:
        for cand, problem in (("examples/cpu/relu.py", "problems/level1/relu.py"),
                              ("examples/cpu/broken/compile_error.py", "problems/level1/relu.py")):
            args = (a.kforge, a.python, cache, os.path.join(ROOT, problem), os.path.join(ROOT, cand))
            plain = evalcli.evaluate(*args, "--plain-headers")
            light = evalcli.evaluate(*args)
            bp, bl = build_stage(plain), build_stage(light)
            print("%s: %s / %s; build %s / %s, light cache hit %s" % (
                cand, plain["status"], light["status"], bp.get("light_headers"),
                bl.get("light_headers"), bl.get("cache_hit")))
            check(plain["status"] == light["status"], cand + ": the same verdict both ways")
            check(plain["correct_trials"]["total"] == light["correct_trials"]["total"],
                  cand + ": the same trials both ways")
            check(bp.get("light_headers") == "off", cand + ": off with --plain-headers")
            check(bl.get("light_headers") == "unchanged", cand + ": nothing rewritten on cpu")
            check(bl.get("cache_hit") is True, cand + ": the plain artifact is reused")
            check([d["message"] for d in plain["diagnostics"] if d["stage"] == "build"] ==
                  [d["message"] for d in light["diagnostics"] if d["stage"] == "build"],
                  cand + ": the same compiler diagnostics")
        check(plain["status"] == "compile_error", "the broken example still fails to compile")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return evalcli.finish("light_headers_test")


if __name__ == "__main__":
    sys.exit(main())
