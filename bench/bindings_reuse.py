#!/usr/bin/env python3
"""How often a kept bindings' object would be reused (--cached-bindings) over a folder of
model-written candidates: each statically resolved load_inline call's main.cpp is rebuilt as
torch's load_inline writes it, planned with runner/kforge_runner/bindings.py, and its cache key
taken as kforge takes it now (the bindings' text: the bound functions' signatures) and as it was
before 2026-12-06 (the text binding the functions by name, and the extension's name). Calls are
visited in path order with one cache, and within each problem folder with a cache of its own
(an RL group's samples of one problem).

  bench/bindings_reuse.py [--kforge build/kforge] FOLDER...
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "runner"))
from kforge_runner import bindings  # noqa: E402  (standard library only)


def main_cpp(spec):
    """main.cpp as torch's load_inline writes it for `spec`."""
    cpp = spec.get("cpp_sources") or []
    if isinstance(cpp, str):
        cpp = [cpp]
    lines = ["#include <torch/extension.h>"] + list(cpp)
    lines += bindings.module_def(spec["functions"], spec.get("with_pytorch_error_handling", True))
    return "\n".join(lines)


def old_text(spec):
    """The bindings' text as planned before the forwarders: the functions by name."""
    return "\n".join(bindings.module_def(spec["functions"],
                                         spec.get("with_pytorch_error_handling", True)))


def reuse(calls, key):
    """(hits, misses) visiting `calls` in order with one cache."""
    seen, hits = set(), 0
    for c in calls:
        k = key(c)
        hits += k in seen
        seen.add(k)
    return hits, len(calls) - hits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("folders", nargs="+")
    a = ap.parse_args()
    files = sorted(os.path.join(d, f) for folder in a.folders for d, _, fs in os.walk(folder)
                   for f in fs if f.endswith(".py"))
    calls, refused, total = [], {}, 0
    for i in range(0, len(files), 200):
        p = subprocess.run([a.kforge, "check", "--json", "--specs"] + files[i:i + 200],
                           capture_output=True, text=True)
        for line in p.stdout.splitlines():
            v = json.loads(line)
            for spec in v.get("specs") or []:
                if not spec.get("functions"):
                    continue
                total += 1
                state, _host, detail = bindings.plan(
                    main_cpp(spec), spec["functions"], spec.get("with_pytorch_error_handling", True))
                if state != "split":
                    why = detail.split(" ")[-1] if "names" in detail else detail
                    refused[why] = refused.get(why, 0) + 1
                    continue
                spec_flags = {k: spec.get(k) for k in ("extra_cflags", "extra_include_paths",
                                                       "with_cuda", "extra_ldflags")}
                calls.append({"group": os.path.dirname(v["candidate"]), "new": detail,
                              "flags": json.dumps(spec_flags, sort_keys=True),
                              "old": old_text(spec), "name": spec.get("name")})
    new = lambda c: (c["new"], c["flags"])  # noqa: E731
    old = lambda c: (c["old"], c["new"], c["name"], c["flags"])  # noqa: E731
    print("%d load_inline calls with functions in %d files; %d planned, %d refused"
          % (total, len(files), len(calls), total - len(calls)))
    for label, key in (("by name (before)", old), ("by signature (now)", new)):
        h, m = reuse(calls, key)
        groups = {}
        for c in calls:
            groups.setdefault(c["group"], []).append(c)
        gh = sum(reuse(g, key)[0] for g in groups.values())
        print("  %-20s one cache: %d of %d reuse (%.0f%%), %d distinct; per problem folder: "
              "%d reuse (%.0f%%)" % (label, h, len(calls), 100.0 * h / max(len(calls), 1), m,
                                     gh, 100.0 * gh / max(len(calls), 1)))
    sigs = {}
    for c in calls:
        sigs[c["new"]] = sigs.get(c["new"], 0) + 1
    top = sorted(sigs.items(), key=lambda kv: -kv[1])[:5]
    print("  the commonest bindings (calls: declarations):")
    for text, n in top:
        decls = [m.group(1) + "(" + m.group(2) + ")" for m in
                 re.finditer(r"\)\)\) (.*) kforge_fn_\d+\((.*)\);$", text, re.M)]
        print("    %4d: %s" % (n, "; ".join(decls)[:150]))


if __name__ == "__main__":
    main()
