"""The reward service's front door (kforge serve, embedded): it is never starved and it lets
only token holders in.

- 200 slow clients (a byte a second) and synchronous reward calls waiting at once: /healthz
  still answers (a liveness bound of 5 s, no precise timing), the slow clients get 408 after
  --request-timeout-s, a body that stops arriving gets 408 too;
- beyond --threads requests in hand: 503 with Retry-After after the gate's admission wait
  (0.5 s), /healthz still 200;
- --token-env: 401 (JSON, nothing echoed) without the token on every route but /healthz, which
  answers only {"ok"}; the token never appears in the log; --host 0.0.0.0 without a token, or
  with a short one, refuses to start.

usage: test_front.py KFORGE [CACHE]
"""
import os
import re
import select
import socket
import subprocess
import threading
import time

from common import (Cluster, EVAL_FLAGS, PROBLEMS, RELU, SLOW_RELU, free_port, fresh, http, read,
                    run_test, wait_until)

TOKEN = "test-token-5f1c2a9e8b7d6c4a3f21"


def healthz_answers(url, times=5):
    """Each of `times` probes (fresh connections) answers 200 within 5 s."""
    worst = 0.0
    for _ in range(times):
        t0 = time.time()
        code, body, _ = http("GET", url + "/healthz", timeout=5)
        worst = max(worst, time.time() - t0)
        assert code == 200 and body["ok"], (code, body)
        time.sleep(0.2)
    return worst


class SlowClients:
    """n connections, each sending a reward request one byte a second from one thread; a
    connection stops sending once the server has answered it (so the answer is not lost to a
    reset)."""

    def __init__(self, port, n, head):
        self.socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
        for s in self.socks:
            s.setblocking(False)
        self.got = {s: b"" for s in self.socks}
        self.head, self.sent, self.stop = head, 0, threading.Event()
        self.t = threading.Thread(target=self.run)
        self.t.start()

    def collect(self, wait_ms):
        p = select.poll()
        for s in self.socks:
            p.register(s, select.POLLIN)
        for fd, _ in p.poll(wait_ms):
            s = next(x for x in self.socks if x.fileno() == fd)
            try:
                self.got[s] += s.recv(4096) or b"\0"  # \0: closed
            except OSError:
                self.got[s] += b"\0"

    def run(self):
        while not self.stop.is_set():
            for s in self.socks:
                if not self.got[s] and self.sent < len(self.head):
                    try:
                        s.send(self.head[self.sent:self.sent + 1])
                    except OSError:
                        pass
            self.sent += 1
            self.collect(1000)

    def answers(self, timeout_s=15):
        """The status line each connection got ('' when it was closed without one)."""
        deadline = time.time() + timeout_s
        while time.time() < deadline and not all(b"\r\n\r\n" in g or g.endswith(b"\0")
                                                  for g in self.got.values()):
            time.sleep(0.2)
        self.stop.set()
        self.t.join()
        out = [self.got[s].split(b"\r\n", 1)[0].decode(errors="replace") for s in self.socks]
        for s in self.socks:
            s.close()
        return out


def reward_calls(url, n, candidate, timeout_s):
    """n synchronous /v1/reward calls in threads; returns the threads and their results."""
    results = []

    def call():
        try:
            results.append(http("POST", url + "/v1/reward", {"problem": "level1/relu",
                                                              "candidate": candidate,
                                                              "timeout_s": timeout_s},
                                timeout=timeout_s + 60))
        except OSError as e:  # the server was stopped under it
            results.append((None, str(e), {}))
    ts = [threading.Thread(target=call) for _ in range(n)]
    for t in ts:
        t.start()
    return ts, results


def check_never_starved(c, port):
    url = c.start_serve("slow", ["--request-timeout-s", "3"], port=port)
    slow = SlowClients(port, 200, b"POST /v1/reward HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n")
    waiting, results = reward_calls(url, 20, fresh(read(SLOW_RELU)), 8)
    time.sleep(1)
    worst = healthz_answers(url)
    code, text, _ = http("GET", url + "/metrics")
    assert code == 200 and "kforge_http_connections" in text, text
    answers = slow.answers()
    assert all(a.startswith("HTTP/1.1 408") for a in answers), set(answers)
    for t in waiting:
        t.join()
    assert len(results) == 20 and all(r[0] == 200 for r in results), [r[0] for r in results]
    print("starvation: /healthz answered under 200 slow clients and 20 waiting rewards "
          "(slowest probe %.3f s); the slow clients got 408" % worst)

    # A body that stops arriving: 408 once the request's time is up, with a JSON error.
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/reward HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"problem\"")
    s.settimeout(15)
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    assert data.startswith(b"HTTP/1.1 408") and b"did not arrive within 3 s" in data, data
    # An empty POST (no Content-Length) is answered at once, and clearly.
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/reward HTTP/1.1\r\nHost: x\r\n\r\n")
    s.settimeout(2)  # it used to wait 5 s for a generic 400
    data = b""
    while True:  # the answer closes the connection
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    assert data.startswith(b"HTTP/1.1 400") and b"no Content-Length" in data, data
    c.kill("slow")


def check_admission(c):
    url = c.start_serve("full", ["--threads", "2"])

    def active():
        """Requests in handler threads, this /metrics call included."""
        _, text, _ = http("GET", url + "/metrics")
        return int(re.search(r"^kforge_http_active_requests (\d+)$", text, re.M).group(1))

    def quiet():
        # A handler thread counts its request until it returns, a moment after the client has
        # its answer: on a loaded machine the next request can arrive before that moment.
        wait_until(lambda: active() == 1, 30, "no request but this one in hand")

    # Three slow jobs queued ahead keep the lane busy, so the two reward calls behind them wait
    # (holding both request threads) for longer than this check takes. Should one of them come
    # back before the third call is answered (refused at the gate by a count that had not yet
    # let go of an earlier request, or answered on a loaded machine), the check is made again
    # with two new calls; a third call admitted while both were still held fails it.
    for attempt in range(3):
        quiet()
        code, body, _ = http("POST", url + "/v1/evaluations", {"items": [
            {"problem": "level1/relu", "candidate": fresh(read(SLOW_RELU))} for _ in range(3)]})
        assert code == 202, body
        quiet()
        waiting, results = reward_calls(url, 1, fresh(read(SLOW_RELU)), 30)
        waiting2, results2 = reward_calls(url, 1, fresh(read(SLOW_RELU)), 30)
        wait_until(lambda: active() == 3 or results or results2, 30,
                   "the two reward calls to be in hand (or one to come back)", 0.2)
        code, body, hdrs, t0 = None, None, {}, time.time()
        if not (results or results2):
            # Answered within 5 s either way: refused (after the gate's 0.5 s admission wait),
            # or (admitted) its reward not ready.
            code, body, hdrs = http("POST", url + "/v1/reward",
                                    {"problem": "level1/relu", "candidate": fresh(read(RELU)),
                                     "timeout_s": 5}, timeout=30)
            if code == 503:
                break
        assert results or results2, ("a third reward call was admitted while two held both "
                                     "request threads", code, body, hdrs)
        print("admission: attempt %d: a held reward call came back first (%s); again" % (
            attempt + 1, (results + results2)[0][:2]))
        for t in waiting + waiting2:
            t.join()
    assert code == 503 and "Retry-After" in hdrs and "busy" in body["error"], (code, body, hdrs)
    assert time.time() - t0 < 5, "503 should come after the 0.5 s admission wait, not a handler's"
    healthz_answers(url, 2)
    print("admission: beyond --threads 2 a reward got 503 + Retry-After after the admission wait; /healthz 200")
    c.kill("full")
    for t in waiting + waiting2:
        t.join()


def check_auth(c):
    os.environ["KFORGE_TEST_TOKEN"] = TOKEN
    url = c.start_serve("auth", ["--host", "0.0.0.0", "--token-env", "KFORGE_TEST_TOKEN"])
    good = {"Authorization": "Bearer " + TOKEN}
    wrong = {"Authorization": "Bearer not-the-token-but-long-enough"}
    for method, path, body in [("GET", "/v1/problems", None), ("GET", "/metrics", None),
                               ("POST", "/v1/reward", {"problem": "level1/relu", "candidate": "x"}),
                               ("POST", "/get_reward", {"query": ["x"], "labels": ["level1/relu"]}),
                               ("GET", "/v1/evaluations/" + "0" * 64, None)]:
        for hdrs in (None, wrong):
            code, got, h = http(method, url + path, body=body, headers=hdrs, timeout=10)
            assert code == 401 and "bearer token" in got["error"], (path, code, got)
            assert "not-the-token" not in str(got) and TOKEN not in str(got), got
            assert h.get("WWW-Authenticate") == "Bearer", h
    code, got, _ = http("GET", url + "/v1/problems", headers=good)
    assert code == 200 and got["problems"], got
    code, got, _ = http("GET", url + "/healthz")
    assert code == 200 and got == {"ok": True}, got
    code, got, _ = http("GET", url + "/healthz", headers=good)
    assert code == 200 and got["engine"] == "embedded" and "in_flight" in got, got
    code, got, _ = http("POST", url + "/v1/reward",
                        {"problem": "level1/relu", "candidate": "no code"}, headers=good)
    assert code == 200 and got["results"][0]["status"] == "format_error", got
    c.kill("auth")
    assert TOKEN not in c.log("auth"), "the token was logged"
    print("auth: 401 without the token on every route but /healthz; the token never logged")
    # Refusals to start: beyond loopback without a token, or with a weak one.
    for args, env, words in [
            (["--host", "0.0.0.0"], {}, "not a loopback address"),
            (["--host", "0.0.0.0", "--token-env", "KF_SHORT"], {"KF_SHORT": "short"}, "at least 16"),
            (["--token-env", "KF_UNSET_VAR"], {}, "unset or empty")]:
        p = subprocess.run([c.kforge, "serve", "--port", str(free_port()), "--problems", PROBLEMS]
                           + EVAL_FLAGS + args, env=dict(os.environ, **env),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and words in p.stderr, (args, p.returncode, p.stderr)
    print("auth: kforge serve refuses to listen beyond loopback without a usable token")


def body(c):
    check_auth(c)
    check_never_starved(c, free_port())
    check_admission(c)


def main():
    run_test("test_front", body)


if __name__ == "__main__":
    main()
