"""Redis as operators run it, against private redis-servers: a password and a Redis 6 ACL user,
Redis restarted without persistence while reward calls wait (every job ends, none waits out
its timeout; a job whose verdict vanished is lost at once; workers back off and log once), TLS
with a CA made here, no password in any output or error; and the embedded engine's states.

usage: test_redis_faults.py KFORGE [CACHE]
"""
import concurrent.futures
import os
import signal
import subprocess
import time
import uuid

from common import (Cluster, RELU, SLOW_RELU, fresh, http, read, wait_until, free_port, run_test,
                    EVAL_FLAGS)

PW = "pw-" + uuid.uuid4().hex[:12]       # the default user's password (requirepass)
ACL_PW = "acl-" + uuid.uuid4().hex[:12]  # the ACL user's, given through the environment
ACL_USER = "kfsvc"
PW_ENV = "KF_TEST_REDIS_PASSWORD"
SECRETS = (PW, ACL_PW)


class Redis:
    """One private redis-server of the cluster, restartable on its port; `cli` are redis-cli's
    connection arguments."""

    def __init__(self, c, name, port, args, cli):
        self.c, self.name, self.port, self.args, self.cli = c, name, port, args, cli

    def start(self):
        self.c._spawn(self.name, ["redis-server", "--bind", "127.0.0.1", "--save", "",
                                  "--appendonly", "no", "--dir", self.c.tmp] + self.args)
        wait_until(lambda: self.call("PING") == "PONG", 20, self.name)

    def call(self, *args):
        out = subprocess.run(["redis-cli", "--no-auth-warning"] + self.cli + list(args),
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip()


def run_kforge(c, args, env=None, timeout=120):
    """A kforge command expected to fail fast: (exit code, stdout + stderr)."""
    p = subprocess.run([c.kforge] + args, capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    out = p.stdout + p.stderr
    with open(os.path.join(c.tmp, "cmd-%s.log" % uuid.uuid4().hex[:8]), "w") as f:
        f.write(out)  # only what kforge printed: scanned for secrets at the end
    return p.returncode, out


def worker_fails(c, url, extra=(), env=None):
    code, out = run_kforge(c, ["worker", "--role", "build", "--redis", url, "--cache", c.cache]
                           + EVAL_FLAGS + list(extra), env=env)
    assert code != 0, out
    return out


def test_logins(c, r):
    print("test: wrong passwords and bad URLs are refused with a clear message, secret-free")
    url = lambda info: "redis://%s127.0.0.1:%d" % (info, r.port)
    out = worker_fails(c, url(":wrong-%s@" % PW))
    assert "refused the login" in out and "WRONGPASS" in out, out
    out = worker_fails(c, url(""))
    assert "wants a password" in out and "--redis-password-env" in out, out
    out = worker_fails(c, url(ACL_USER + ":@"), ["--redis-password-env", PW_ENV],
                       env={PW_ENV: "not-" + ACL_PW})
    assert "refused the login of user '%s'" % ACL_USER in out, out
    # An unencoded '/' in a password cuts the URL there; the error still hides all of it.
    out = worker_fails(c, url(":%s/x@" % PW))
    assert "bad Redis URL redis://:***@127.0.0.1" in out, out
    out = worker_fails(c, url(":%s@" % PW), ["--redis-password-env", PW_ENV], env={PW_ENV: ACL_PW})
    assert "given twice" in out, out


def start_cluster(c, r):
    """serve and the gpu worker log in as the ACL user (password from the environment), the
    build worker as the default user (password in the URL)."""
    os.environ[PW_ENV] = ACL_PW
    acl = ["--redis", "redis://%s:@127.0.0.1:%d" % (ACL_USER, r.port),
           "--redis-password-env", PW_ENV]
    c.start_worker("build", "build", "redis://:%s@127.0.0.1:%d" % (PW, r.port),
                   ["--reclaim-idle-ms", "3000"])
    c._spawn("gpu", [c.kforge, "worker", "--role", "gpu", "--name", "gpu", "--cache", c.cache,
                     "--reclaim-idle-ms", "3000"] + EVAL_FLAGS + acl)
    return c.start_serve("serve", acl)


def test_restart_without_persistence(c, r, url):
    print("test: Redis restarted without its data while 8 reward calls wait")
    relu, slow = read(RELU), read(SLOW_RELU)
    # One job done before the restart: its verdict goes with Redis's data.
    done_cand = fresh(relu)
    code, body, _ = http("POST", url + "/v1/reward", {"problem": "level1/relu",
                                                      "candidate": done_cand}, timeout=400)
    assert code == 200 and body["results"][0]["state"] == "done", body
    done_id = body["results"][0]["id"]
    cands = [fresh(slow if i % 2 == 0 else relu) for i in range(8)]
    timeout_s = 400

    def reward(cand):
        t0 = time.time()
        code, body, _ = http("POST", url + "/v1/reward",
                             {"problem": "level1/relu", "candidate": cand, "timeout_s": timeout_s},
                             timeout=timeout_s + 60)
        return code, body, time.time() - t0

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        futures = [pool.submit(reward, cand) for cand in cands]
        # Wait until all eight are in Redis (in flight or done: the done job before them is the
        # one result already there), or the kill can fall on a submission still under way, which
        # is rightly refused 503, not what this test is about.
        def submitted():
            return (int(r.call("HLEN", "kf:entries") or 0) +
                    int(r.call("HLEN", "kf:results") or 0)) >= 1 + len(cands)
        wait_until(submitted, 120, "the 8 reward calls' jobs in Redis", 0.2)
        # And until work is under way: the gpu worker has taken a job.
        wait_until(lambda: " level1/relu" in c.log("gpu"), 240, "the gpu worker to take a job")
        ids = r.call("HKEYS", "kf:entries").split()
        assert ids, "no job in flight"

        def one_running():
            return any(http("GET", url + "/v1/evaluations/" + j)[1].get("state") == "running"
                       for j in ids)
        wait_until(one_running, 60, "a job in state running", 0.5)
        r.c.kill(r.name, signal.SIGKILL)
        t_down = time.time()
        print("redis killed with %d jobs in flight" % len(ids))
        code, body, _ = http("GET", url + "/healthz")
        assert code == 503 and ("Redis at 127.0.0.1:%d" % r.port) in body["error"], (code, body)
        time.sleep(4)  # a few backoff rounds: the workers must say so once
        r.start()
        print("redis back, empty, after %.1f s" % (time.time() - t_down))
        # Every job this server submitted answers the same from every route: never 404.
        for job in ids:
            code, body, _ = http("GET", url + "/v1/evaluations/" + job)
            assert code == 200 and body["state"] in ("queued", "running", "done"), (code, body)
        # The job done before: its verdict is gone and the server holds no copy: lost, at once.
        t0 = time.time()
        code, body, _ = http("GET", url + "/v1/evaluations/%s?wait=120" % done_id)
        assert code == 200 and body["state"] == "lost" and body["status"] == "infra_error", body
        assert time.time() - t0 < 30, time.time() - t0
        assert "vanished from Redis" in body["verdict"]["diagnostics"][0]["message"], body
        code, body, _ = http("POST", url + "/v1/evaluations", {"problem": "level1/relu",
                                                               "candidate": done_cand})
        assert code == 202 and body["evaluations"][0]["state"] in ("queued", "running"), body
        print("lost: the verdict done before the restart answered lost at once; resubmitted")
        results = [f.result() for f in futures]
    for code, body, elapsed in results:
        assert code == 200, (code, body)
        res = body["results"][0]
        assert res["state"] == "done", res  # settled, not timed out
        assert elapsed < timeout_s - 60, elapsed
        assert res["status"] in ("ok", "infra_error"), res
        if res["status"] == "ok":
            assert res["reward"] is not None and res["reward"] > 0, res
    slowest = max(e for _, _, e in results)
    print("restart: all 8 reward calls settled (slowest %.0f s of a %d s timeout): %s"
          % (slowest, timeout_s, sorted(b["results"][0]["status"] for _, b, _ in results)))
    serve_log = c.log("serve")
    assert "Redis lost its data" in serve_log and "queued again" in serve_log, serve_log
    for w in ("build", "gpu"):
        log = c.log(w)
        downs = [l for l in log.splitlines() if "redis down" in l]
        backs = [l for l in log.splitlines() if "redis back" in l]
        assert len(downs) == 1 and len(backs) == 1, log
    print("workers: one 'redis down' and one 'redis back' line each")
    code, body, _ = http("GET", url + "/metrics")
    assert "kforge_redis_data_losses_total 1" in body, body
    for k in ("kforge_jobs_requeued_total", "kforge_jobs_lost_total"):
        assert k in body, body


def test_embedded_states(c):
    print("test: the embedded engine's states, and 404 for an id of an earlier run")
    url = c.start_serve("serve-embedded", [])
    code, body, _ = http("POST", url + "/v1/evaluations",
                         {"problem": "level1/relu", "candidate": fresh(read(SLOW_RELU))})
    assert code == 202 and body["evaluations"][0]["state"] in ("queued", "running"), body
    job = body["id"]
    seen = set()

    def state():
        s = http("GET", url + "/v1/evaluations/" + job)[1]["state"]
        seen.add(s)
        return s == "done"
    wait_until(state, 300, "the embedded job to finish", 0.2)
    assert "running" in seen and seen <= {"queued", "running", "done"}, seen
    c.kill("serve-embedded", signal.SIGTERM)
    url = c.start_serve("serve-embedded-2", [])
    for route in ("/v1/evaluations/%s" % job, "/v1/evaluations/%s?wait=5" % job):
        code, body, _ = http("GET", url + route)
        assert code == 404, (route, code, body)
    c.kill("serve-embedded-2", signal.SIGTERM)
    print("embedded: states", sorted(seen), "; after a restart the id is 404 from every route")


def make_certs(d):
    """A test CA, a server certificate for DNS:localhost only, and a client certificate."""
    def sh(*args):
        subprocess.run(["openssl"] + list(args), cwd=d, check=True, capture_output=True)
    sh("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
       "-days", "2", "-subj", "/CN=kforge test CA")
    for name, ext in (("server", "subjectAltName=DNS:localhost"), ("client", "extendedKeyUsage=clientAuth")):
        sh("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
           "-subj", "/CN=" + name)
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write(ext + "\n")
        sh("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
           "-CAcreateserial", "-out", name + ".crt", "-days", "2", "-extfile", name + ".ext")
    return {k: os.path.join(d, k) for k in ("ca.crt", "server.crt", "server.key", "client.crt",
                                            "client.key")}


def test_tls(c):
    print("test: rediss:// to a redis-server with a test CA that wants client certificates")
    d = os.path.join(c.tmp, "tls")
    os.makedirs(d)
    k = make_certs(d)
    port = free_port()
    r = Redis(c, "redis-tls", port, ["--port", "0", "--tls-port", str(port), "--tls-cert-file",
                               k["server.crt"], "--tls-key-file", k["server.key"],
                               "--tls-ca-cert-file", k["ca.crt"], "--tls-auth-clients", "yes",
                               "--requirepass", PW],
              ["--tls", "--cacert", k["ca.crt"], "--cert", k["client.crt"], "--key",
               k["client.key"], "-h", "localhost", "-p", str(port), "-a", PW])
    r.start()
    cert = "cert=%s&key=%s" % (k["client.crt"], k["client.key"])
    base = "rediss://:%s@%%s:%d?%%s" % (PW, port)
    out = worker_fails(c, base % ("localhost", cert))  # the system's CAs know no test CA
    assert "the server's certificate is not trusted" in out and "?ca=FILE" in out, out
    out = worker_fails(c, base % ("127.0.0.1", "ca=%s&%s" % (k["ca.crt"], cert)))
    assert "not trusted" in out and "IP address mismatch" in out, out  # issued for localhost
    out = worker_fails(c, base % ("localhost", "ca=" + k["ca.crt"]))  # no client certificate
    # ("tlsv13 alert certificate required", or a reset where the server's alert was lost)
    assert "client certificate: ?cert=FILE&key=FILE" in out, out
    out = worker_fails(c, "redis://:%s@localhost:%d" % (PW, port))  # plain TCP to a TLS port
    assert "Redis at localhost:%d" % port in out and "use rediss://" in out, out
    good = base % ("localhost", "ca=%s&%s" % (k["ca.crt"], cert))
    c.start_worker("build-tls", "build", good)
    c.start_worker("gpu-tls", "gpu", good)
    url = c.start_serve("serve-tls", ["--redis", good])
    code, body, _ = http("POST", url + "/v1/reward",
                         {"problem": "level1/relu", "candidate": fresh(read(RELU))}, timeout=400)
    assert code == 200 and body["results"][0]["status"] == "ok", body
    assert "rediss://:***@localhost" in c.log("serve-tls"), c.log("serve-tls")
    print("tls: reward", body["rewards"][0], "over rediss://; bad CA, name, client cert refused")
    return url


def test_no_secret_anywhere(c, urls):
    print("test: no password in any kforge output, log, error or HTTP answer")
    texts = []
    for name in os.listdir(c.tmp):
        if name.endswith(".log") and not name.startswith("redis"):
            texts.append((name, read(os.path.join(c.tmp, name))))
    for url in urls:
        for route in ("/healthz", "/metrics"):
            texts.append((url + route, str(http("GET", url + route)[1])))
    for name, text in texts:
        for s in SECRETS:
            assert s not in text, "%s shows a password" % name
    print("no secret in %d outputs" % len(texts))


def body(c):
    port = free_port()
    r = Redis(c, "redis", port, ["--port", str(port), "--requirepass", PW, "--user", ACL_USER,
                                 "on", ">" + ACL_PW, "~kf:*", "&*", "+@all", "-@dangerous"],
              ["-p", str(port), "-a", PW])
    r.start()
    t0 = time.time()
    test_logins(c, r)
    print("  (%.0f s)" % (time.time() - t0))
    url = start_cluster(c, r)
    test_restart_without_persistence(c, r, url)
    print("  (%.0f s)" % (time.time() - t0))
    for n in ("build", "gpu"):
        c.kill(n, signal.SIGTERM)
    tls_url = test_tls(c)
    print("  (%.0f s)" % (time.time() - t0))
    for n in ("build-tls", "gpu-tls"):
        c.kill(n, signal.SIGTERM)
    test_embedded_states(c)
    print("  (%.0f s)" % (time.time() - t0))
    test_no_secret_anywhere(c, [url, tls_url])


def main():
    run_test("test_redis_faults", body)


if __name__ == "__main__":
    main()
