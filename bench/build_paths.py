#!/usr/bin/env python3
"""Where a bench's build CPU went, by the path each build took: the split build used, refused or
fallen back, light headers used or fallen back, and whether the candidate ended compile_error.
Reads the verdicts.jsonl of one or more `kforge bench --out` folders (a candidate counted once,
by its hash; verdicts answered from the store carry the stages of the run that made them).

  bench/build_paths.py BENCH_DIR... [--json]

Prints one row a path: builds, median and total build CPU-s (`build.cpu_ms`), and its share of
the whole; then what compile errors cost against the rest.
"""
import argparse
import collections
import json
import os
import statistics
import sys


def builds(bench_dirs):
    """(path, failed, cpu_s) for each distinct candidate whose build stage compiled something."""
    seen = set()
    for d in bench_dirs:
        with open(os.path.join(d, "verdicts.jsonl")) as f:
            for line in f:
                if not line.strip():
                    continue
                v = json.loads(line).get("verdict") or {}
                key = (v.get("candidate") or {}).get("hash")
                if key in seen:
                    continue
                seen.add(key)
                stage = next((s for s in v.get("stages") or [] if s.get("name") == "build"), None)
                if not stage or not stage.get("cpu_ms"):
                    continue  # a cache hit, or no build
                path = "split %s, light %s" % (stage.get("split_build") or "-",
                                               stage.get("light_headers") or "-")
                yield path, v.get("status") == "compile_error", stage["cpu_ms"] / 1000.0


def table(rows):
    groups = collections.defaultdict(list)
    for path, failed, cpu in rows:
        groups[(path, failed)].append(cpu)
    total = sum(sum(xs) for xs in groups.values())
    out = []
    for (path, failed), xs in sorted(groups.items(), key=lambda kv: -sum(kv[1])):
        out.append({"path": path, "compile_error": failed, "builds": len(xs),
                    "median_cpu_s": round(statistics.median(xs), 1),
                    "total_cpu_s": round(sum(xs), 1),
                    "share": round(sum(xs) / total, 3) if total else 0.0})
    return out, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench_dirs", nargs="+")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = list(builds(args.bench_dirs))
    if not rows:
        sys.exit("build_paths: no build that compiled in %s" % ", ".join(args.bench_dirs))
    out, total = table(rows)
    failed = [cpu for _, f, cpu in rows if f]
    if args.json:
        print(json.dumps({"paths": out, "builds": len(rows), "total_cpu_s": round(total, 1),
                          "compile_error_cpu_s": round(sum(failed), 1)}, indent=1))
        return
    print("%-34s %-13s %6s %10s %10s %6s" % ("path", "compile_error", "builds", "median s",
                                             "total s", "share"))
    for r in out:
        print("%-34s %-13s %6d %10.1f %10.1f %5.1f%%" % (
            r["path"], "yes" if r["compile_error"] else "no", r["builds"], r["median_cpu_s"],
            r["total_cpu_s"], 100 * r["share"]))
    print("%d builds, %.0f CPU-s; compile errors %d builds, %.0f CPU-s (%.0f%%)" % (
        len(rows), total, len(failed), sum(failed), 100 * sum(failed) / total if total else 0))


if __name__ == "__main__":
    main()
