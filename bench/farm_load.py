#!/usr/bin/env python3
"""Posts a bench workload (bench/make_candidates.py's OUT: problems/ and samples/) to a running
`kforge serve` as one step of GRPO groups (POST /v1/groups, one group per problem copy) and
reports how long the service took to answer every sample: the throughput of whatever builds and
runs behind it (bench/build_farm.sh: build workers as a farm feeding one GPU worker).

Every sample's kernel sources carry a distinct comment (make_candidates.py), so each is built
once, by whichever build worker takes it. Checked: one result per sample, every status the
example's own (`ok` for the honest examples make_candidates copies), none lost.

  python3 bench/farm_load.py --url http://127.0.0.1:8000 --workload DIR --out farm.json

Exit: 0 every sample answered `ok`, 1 one did not, 2 the run could not start. Standard library
only.
"""
import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request


def groups_of(workload):
    """[(problem id, [sample texts])], one per problem copy, in a fixed order."""
    samples = os.path.join(workload, "samples")
    out = []
    for level in sorted(os.listdir(samples)):
        for problem in sorted(os.listdir(os.path.join(samples, level))):
            folder = os.path.join(samples, level, problem)
            texts = [open(os.path.join(folder, f)).read() for f in sorted(os.listdir(folder))
                     if f.endswith(".py")]
            if texts:
                out.append(("%s/%s" % (level, problem), texts))
    return out


def post(url, body, timeout):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--workload", required=True, help="make_candidates.py's --out")
    ap.add_argument("--timeout-s", type=int, default=3000)
    ap.add_argument("--label", default="", help="names this run in the report")
    ap.add_argument("--out", help="the report as JSON")
    a = ap.parse_args()
    groups = groups_of(a.workload)
    n = sum(len(t) for _, t in groups)
    if n == 0:
        print("farm_load: no samples under %s/samples" % a.workload, file=sys.stderr)
        return 2
    body = {"groups": [{"problem": p, "candidates": t, "group_id": p} for p, t in groups],
            "timeout_s": a.timeout_s}
    t0 = time.time()
    try:
        reply = post(a.url.rstrip("/") + "/v1/groups", body, a.timeout_s + 60)
    except (urllib.error.URLError, OSError) as e:
        print("farm_load: the service did not answer: %s" % e, file=sys.stderr)
        return 2
    wall = time.time() - t0
    statuses, answered, build_ms = {}, 0, []
    for g in reply.get("groups", []):
        for r in g.get("results", []):
            answered += 1
            st = (r.get("verdict") or {}).get("status") or r.get("status") or "none"
            statuses[st] = statuses.get(st, 0) + 1
            for s in (r.get("verdict") or {}).get("stages", []):
                if s.get("name") == "build" and not s.get("cache_hit"):
                    build_ms.append(s.get("ms", 0))
    report = {"label": a.label, "samples": n, "answered": answered, "wall_s": round(wall, 1),
              "per_candidate_s": round(wall / n, 3),
              "candidates_per_hour": round(3600.0 * n / wall, 1) if wall > 0 else None,
              "statuses": statuses, "builds_compiled": len(build_ms)}
    print("%s%d samples in %.1f s: %.3f s each, %.0f an hour; %s" % (
        (a.label + ": ") if a.label else "", n, wall, wall / n, 3600.0 * n / wall,
        ", ".join("%s %d" % kv for kv in sorted(statuses.items()))))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    ok = answered == n and statuses.get("ok", 0) == n
    if not ok:
        print("farm_load: expected %d `ok`, got %s (%d answered)" % (n, statuses, answered),
              file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
