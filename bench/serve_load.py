#!/usr/bin/env python3
"""Load benchmark of the reward service: requests per second and latency percentiles of
POST /v1/reward, for cached verdicts (the same candidate again and again) and for new ones
(distinct candidates that each need an evaluation; their extension comes from the artifact
cache, so this measures queueing, execution and the service, not the compiler).

Start a server first, e.g.
  build/kforge serve --port 8000 --problems problems --backend cpu --no-baselines
then
  python3 bench/serve_load.py --url http://127.0.0.1:8000

Standard library only.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import time
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def post(url, body, timeout):
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=timeout) as r:
        out = json.loads(r.read())
    return time.perf_counter() - t0, out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def run(name, url, bodies, concurrency, timeout):
    lat, bad = [], 0
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=concurrency) as pool:
        for dt, out in pool.map(lambda b: post(url, b, timeout), bodies):
            lat.append(dt)
            r = out["results"][0]
            bad += 0 if r["state"] == "done" and r["status"] != "infra_error" else 1
    wall = time.perf_counter() - t0
    row = {"phase": name, "requests": len(bodies), "concurrency": concurrency,
           "seconds": round(wall, 2), "rps": round(len(bodies) / wall, 1),
           "p50_ms": round(pct(lat, 50) * 1000, 1), "p99_ms": round(pct(lat, 99) * 1000, 1),
           "max_ms": round(max(lat) * 1000, 1), "not_done": bad}
    print(json.dumps(row))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8000")
    ap.add_argument("--problem", default="level1/relu")
    ap.add_argument("--candidate", default=os.path.join(ROOT, "examples", "cpu", "relu.py"))
    ap.add_argument("--requests", type=int, default=2000, help="cached-verdict requests")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--new", type=int, default=20, help="new candidates (one evaluation each)")
    ap.add_argument("--new-concurrency", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=900)
    a = ap.parse_args()
    url = a.url.rstrip("/") + "/v1/reward"
    with open(a.candidate) as f:
        cand = f.read()
    body = {"problem": a.problem, "candidate": cand}
    dt, out = post(url, body, a.timeout)  # warm: the verdict exists from here on
    print(json.dumps({"warm_up_s": round(dt, 2), "status": out["results"][0]["status"]}))
    run("cached", url, [body] * a.requests, a.concurrency, a.timeout)
    if a.new > 0:
        fresh = [{"problem": a.problem, "candidate": cand + "\n# bench %s\n" % uuid.uuid4().hex}
                 for _ in range(a.new)]
        run("new", url, fresh, a.new_concurrency, a.timeout)


if __name__ == "__main__":
    main()
