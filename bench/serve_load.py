#!/usr/bin/env python3
"""Load benchmark of the reward service.

Default run: requests per second and latency percentiles of POST /v1/reward, for cached
verdicts (the same candidate again and again) and for new ones (distinct candidates that each
need an evaluation; their extension comes from the artifact cache, so this measures queueing,
execution and the service, not the compiler).

--mixed N: N concurrent clients at once for --duration-s, a --slow-fraction of them slow
clients (each sends a real reward request one byte every --slow-interval-s, and starts again
when the server answers or closes), the rest synchronous reward requests for new candidates
that wait up to --reward-timeout-s each (and go again when answered); meanwhile /healthz is
asked every --probe-interval-s on a fresh connection, and its latency percentiles are the
result.

Start a server first, e.g.
  build/kforge serve --port 8000 --problems problems --backend cpu --no-baselines
then
  python3 bench/serve_load.py --url http://127.0.0.1:8000
  python3 bench/serve_load.py --url http://127.0.0.1:8000 --mixed 1000 --duration-s 60

Standard library only.
"""
import argparse
import concurrent.futures
import http.client
import json
import multiprocessing
import os
import select
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def headers(token):
    h = {"Content-Type": "application/json"}
    if token:
        h["Authorization"] = "Bearer " + token
    return h


def post(url, body, timeout, token=None):
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST", headers=headers(token))
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=timeout) as r:
        out = json.loads(r.read())
    return time.perf_counter() - t0, out


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def ms(x):
    return None if x is None else round(x * 1000, 1)


def run(name, url, bodies, concurrency, timeout, token):
    lat, bad = [], 0
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=concurrency) as pool:
        for dt, out in pool.map(lambda b: post(url, b, timeout, token), bodies):
            lat.append(dt)
            r = out["results"][0]
            bad += 0 if r["state"] == "done" and r["status"] != "infra_error" else 1
    wall = time.perf_counter() - t0
    row = {"phase": name, "requests": len(bodies), "concurrency": concurrency,
           "seconds": round(wall, 2), "rps": round(len(bodies) / wall, 1),
           "p50_ms": ms(pct(lat, 50)), "p99_ms": ms(pct(lat, 99)), "max_ms": ms(max(lat)),
           "not_done": bad}
    print(json.dumps(row))
    return row


class Mixed:
    """Slow clients, waiting reward requests and a /healthz prober, all at once."""

    def __init__(self, a, token, cand):
        u = urllib.parse.urlsplit(a.url)
        self.host, self.port = u.hostname, u.port or 80
        self.a, self.token, self.cand = a, token, cand
        self.stop = multiprocessing.Event()
        self.lock = threading.Lock()
        self.fast = {"requests": 0, "codes": {}, "done": 0, "pending": 0, "latency_s": []}
        self.slow = {"connections": 0, "answers": {}, "closed_without_answer": 0}

    def reward_body(self):
        return {"problem": self.a.problem, "timeout_s": self.a.reward_timeout_s,
                "candidate": self.cand + "\n# bench %s\n" % uuid.uuid4().hex}

    def fast_client(self):
        url = self.a.url.rstrip("/") + "/v1/reward"
        while not self.stop.is_set():
            t0 = time.perf_counter()
            code, state = None, None
            try:
                dt, out = post(url, self.reward_body(), self.a.reward_timeout_s + 60, self.token)
                code, state = 200, out["results"][0]["state"]
            except urllib.error.HTTPError as e:
                code = e.code
                if e.code == 503:
                    time.sleep(float(e.headers.get("Retry-After", "1")))
            except OSError as e:
                code = type(e).__name__
            with self.lock:
                self.fast["requests"] += 1
                self.fast["codes"][str(code)] = self.fast["codes"].get(str(code), 0) + 1
                if state == "done":
                    self.fast["done"] += 1
                elif state:
                    self.fast["pending"] += 1
                if code == 200:
                    self.fast["latency_s"].append(time.perf_counter() - t0)

    def slow_request(self):
        body = json.dumps(self.reward_body()).encode()
        head = "POST /v1/reward HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n" % (
            self.host, self.port)
        if self.token:
            head += "Authorization: Bearer %s\r\n" % self.token
        head += "Content-Length: %d\r\n\r\n" % len(body)
        return head.encode() + body

    def slow_clients(self, n):
        """One thread: n sockets, each sent one byte every slow_interval_s."""
        conns = {}  # fd -> [socket, request bytes, bytes sent, bytes received]
        poller = select.poll()

        def connect():
            s = socket.create_connection((self.host, self.port), timeout=10)
            s.setblocking(False)
            conns[s.fileno()] = [s, self.slow_request(), 0, b""]
            poller.register(s, select.POLLIN)
            self.slow["connections"] += 1

        for _ in range(n):
            connect()
        next_send = time.monotonic()
        while not self.stop.is_set():
            now = time.monotonic()
            if now >= next_send:
                for st in conns.values():
                    if st[2] < len(st[1]):
                        try:
                            st[2] += st[0].send(st[1][st[2]:st[2] + 1])
                        except OSError:
                            pass
                next_send = now + self.a.slow_interval_s
            for fd, _ in poller.poll(max(1, int((next_send - time.monotonic()) * 1000))):
                st = conns[fd]
                try:
                    data = st[0].recv(65536)
                except OSError:
                    data = b""
                st[3] += data
                if data and b"\r\n\r\n" not in st[3]:
                    continue
                got = st[3]
                with self.lock:
                    if got.startswith(b"HTTP/1.1 "):
                        code = got[9:12].decode()
                        self.slow["answers"][code] = self.slow["answers"].get(code, 0) + 1
                    else:
                        self.slow["closed_without_answer"] += 1
                poller.unregister(fd)
                del conns[fd]
                st[0].close()
                try:  # and start again, so the pressure lasts the whole run
                    connect()
                except OSError:
                    pass
        for st in conns.values():
            st[0].close()

    def prober(self, out):
        """In a process of its own, so the load generator's threads do not delay it."""
        health, failed = [], []
        time.sleep(self.warm_s)  # every client connected and waiting first
        while not self.stop.is_set():
            t0 = time.perf_counter()
            try:
                c = http.client.HTTPConnection(self.host, self.port, timeout=5)
                c.request("GET", "/healthz")
                r = c.getresponse()
                r.read()
                c.close()
                if r.status == 200:
                    health.append(time.perf_counter() - t0)
                else:
                    failed.append(r.status)
            except OSError as e:
                failed.append(type(e).__name__)
            time.sleep(self.a.probe_interval_s)
        out.put((health, failed))

    def run(self):
        n_slow = int(round(self.a.mixed * self.a.slow_fraction))
        n_fast = self.a.mixed - n_slow
        self.warm_s = min(5.0, self.a.duration_s / 4)
        # The prober's process is forked before any thread of the load exists.
        results = multiprocessing.Queue()
        probe = multiprocessing.Process(target=self.prober, args=(results,))
        probe.start()
        threads = [threading.Thread(target=self.slow_clients, args=(n_slow,))]
        threads += [threading.Thread(target=self.fast_client) for _ in range(n_fast)]
        for t in threads:
            t.start()
        time.sleep(self.warm_s + self.a.duration_s)
        metrics = self.front_metrics()
        self.stop.set()
        self.health, self.health_failed = results.get()
        probe.join()
        for t in threads:
            t.join()
        lat = self.fast.pop("latency_s")
        self.fast["p50_s"] = None if not lat else round(pct(lat, 50), 2)
        self.fast["max_s"] = None if not lat else round(max(lat), 2)
        row = {"phase": "mixed", "clients": self.a.mixed, "slow": n_slow, "waiting_rewards": n_fast,
               "probed_s": self.a.duration_s,
               "healthz": {"answered": len(self.health), "failed": len(self.health_failed),
                           "failures": sorted(set(map(str, self.health_failed)))[:5],
                           "p50_ms": ms(pct(self.health, 50)), "p90_ms": ms(pct(self.health, 90)),
                           "p99_ms": ms(pct(self.health, 99)),
                           "max_ms": ms(max(self.health) if self.health else None)},
               "fast": self.fast, "slow_clients": self.slow, "server_during": metrics}
        print(json.dumps(row))
        return row

    def front_metrics(self):
        """The service's front counters, read during the run."""
        try:
            req = urllib.request.Request(self.a.url.rstrip("/") + "/metrics",
                                         headers=headers(self.token))
            with urllib.request.urlopen(req, timeout=5) as r:
                text = r.read().decode()
        except OSError as e:
            return {"error": type(e).__name__}
        out = {}
        for line in text.splitlines():
            if line.startswith("kforge_http_") and " " in line and "{" not in line:
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
            if line.startswith("kforge_jobs_in_flight "):
                out["kforge_jobs_in_flight"] = float(line.split()[1])
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8000")
    ap.add_argument("--problem", default="level1/relu")
    ap.add_argument("--candidate", default=os.path.join(ROOT, "examples", "cpu", "relu.py"))
    ap.add_argument("--token-env", help="environment variable holding the bearer token")
    ap.add_argument("--requests", type=int, default=2000, help="cached-verdict requests")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--new", type=int, default=20, help="new candidates (one evaluation each)")
    ap.add_argument("--new-concurrency", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--mixed", type=int, default=0,
                    help="clients of the mixed run (slow clients and waiting rewards)")
    ap.add_argument("--slow-fraction", type=float, default=0.5)
    ap.add_argument("--slow-interval-s", type=float, default=2.0)
    ap.add_argument("--duration-s", type=float, default=60)
    ap.add_argument("--reward-timeout-s", type=float, default=30)
    ap.add_argument("--probe-interval-s", type=float, default=0.1)
    a = ap.parse_args()
    token = os.environ.get(a.token_env) if a.token_env else None
    url = a.url.rstrip("/") + "/v1/reward"
    with open(a.candidate) as f:
        cand = f.read()
    body = {"problem": a.problem, "candidate": cand}
    dt, out = post(url, body, a.timeout, token)  # warm: the verdict and the artifact exist
    print(json.dumps({"warm_up_s": round(dt, 2), "status": out["results"][0]["status"]}))
    if a.mixed > 0:
        Mixed(a, token, cand).run()
        return
    run("cached", url, [body] * a.requests, a.concurrency, a.timeout, token)
    if a.new > 0:
        fresh = [{"problem": a.problem, "candidate": cand + "\n# bench %s\n" % uuid.uuid4().hex}
                 for _ in range(a.new)]
        run("new", url, fresh, a.new_concurrency, a.timeout, token)


if __name__ == "__main__":
    main()
