#!/usr/bin/env python3
"""Times the web UI's pages over a store of synthetic verdicts (docs/PERFORMANCE.md, "Web UI").

Fills a fresh store with build/kforge_web_fill (RUNS runs x PROBLEMS problems x SAMPLES samples
per problem, one verdict each), serves it with `kforge ui`, and fetches each page N times over
one keep-alive connection, end to end (HTTP front, store queries, rendering). Prints a table of
median, p95 and largest time per page and its size, and whether every p95 is under the bound.

Usage: bench/web_pages.py [--build build] [--runs 40] [--problems 250] [--samples 1] [-n 30]
"""
import argparse
import http.client
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

BOUND_MS = 200.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--problems", type=int, default=250)
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("-n", type=int, default=30, help="timed fetches per page")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="kf-web-bench-")
    ui = None
    try:
        t0 = time.time()
        fill = subprocess.run([os.path.join(a.build, "kforge_web_fill"), os.path.join(tmp, "kforge.db"),
                               str(a.runs), str(a.problems), str(a.samples)],
                              capture_output=True, text=True, check=True)
        keys = dict(re.findall(r"^(cheat_key|ok_key) (\w+)$", fill.stdout, re.M))
        verdicts = a.runs * a.problems * a.samples
        db_mb = os.path.getsize(os.path.join(tmp, "kforge.db")) / 2**20
        print("store: %d runs x %d problems x %d samples = %d verdicts (%.0f MiB), filled in %.1f s"
              % (a.runs, a.problems, a.samples, verdicts, db_mb, time.time() - t0))
        port = free_port()
        ui = subprocess.Popen([os.path.join(a.build, "kforge"), "ui", "--cache", tmp, "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        other = "0" * 64
        pages = [
            ("runs list", "/"),
            ("run (first)", "/ui/runs/1"),
            ("run (last)", "/ui/runs/%d" % a.runs),
            ("compare two runs", "/ui/compare?a=1&b=%d" % a.runs),
            ("problems", "/ui/problems"),
            ("problem leaderboard", "/ui/problem?id=level1/1_problem_000"),
            ("verdict (ok)", "/ui/verdicts/" + keys["ok_key"]),
            ("verdict (cheat)", "/ui/verdicts/" + keys["cheat_key"]),
            ("verdict + diff", "/ui/verdicts/%s?diff=%s" % (keys["ok_key"], other)),
        ]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        rows, worst = [], 0.0
        for name, path in pages:
            times, size = [], 0
            for i in range(a.n + 1):
                t = time.perf_counter()
                conn.request("GET", path, headers={"Host": "127.0.0.1:%d" % port})
                r = conn.getresponse()
                body = r.read()
                ms = (time.perf_counter() - t) * 1000
                assert r.status == 200, (path, r.status, body[:200])
                size = len(body)
                if i:  # the first is a warm-up
                    times.append(ms)
            times.sort()
            p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
            worst = max(worst, p95)
            rows.append((name, path, statistics.median(times), p95, times[-1], size))
        print("\n| page | median ms | p95 ms | max ms | KiB |\n|---|---:|---:|---:|---:|")
        for name, path, med, p95, mx, size in rows:
            print("| %s (`%s`) | %.1f | %.1f | %.1f | %.0f |" % (name, path.split("?")[0][:40], med, p95, mx,
                                                                  size / 1024))
        ok = worst < BOUND_MS
        print("\nworst p95 %.1f ms: %s the %.0f ms bound" % (worst, "within" if ok else "OVER", BOUND_MS))
        return 0 if ok else 1
    finally:
        if ui:
            ui.terminate()
            ui.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
