"""The distributed reward service: kforge serve --redis with build and gpu workers, against a
private redis-server. A gpu worker killed mid-job, the server restarted with jobs pending,
1,000 concurrent reward requests,
the delivery limit.

usage: test_redis.py KFORGE [CACHE]
"""
import concurrent.futures
import os
import signal
import time

from common import (Cluster, descendants, PROBLEMS, RELU, SLOW_RELU, free_port, fresh, http, read, run_test,
                    wait_until)


def gpu_worker_running(cluster, job_id, names):
    """The name of the gpu worker whose log shows it took job_id, if any."""
    for n in names:
        if n in cluster.procs and ("job %s level1/relu" % job_id[:12]) in cluster.log(n):
            return n
    return None


def test_killed_gpu_worker(c, url):
    cand = fresh(read(SLOW_RELU))
    code, body, _ = http("POST", url + "/v1/evaluations", {"problem": "level1/relu", "candidate": cand})
    assert code == 202, (code, body)
    job = body["id"]
    victim = wait_until(lambda: gpu_worker_running(c, job, ["gpu-a", "gpu-b"]), 240,
                        "a gpu worker to take the slow job")
    # The candidate's first forward call sleeps 4 s: a moment in, the worker is mid-job.
    time.sleep(2.0)
    assert c.redis("HEXISTS", "kf:results", job) == "0", "finished before the kill"
    c.kill(victim, signal.SIGKILL)
    print("killed", victim, "mid-job")
    code, body, _ = http("GET", url + "/v1/evaluations/%s?wait=300" % job, timeout=320)
    assert code == 200 and body["state"] == "done", (code, body)
    survivor = "gpu-b" if victim == "gpu-a" else "gpu-a"
    assert body["worker"] == survivor, body["worker"]
    assert body["deliveries"] >= 2, body["deliveries"]
    assert body["status"] != "infra_error", body["verdict"]["diagnostics"]
    # Exactly one verdict: one entry in the results hash, written once, nothing left pending.
    assert c.redis("HEXISTS", "kf:results", job) == "1"
    # (The worker logs after writing: the verdict can be read before the line is there.)
    def verdict_lines():
        return [l for l in c.log(survivor).splitlines() if job[:12] in l and "verdict" in l]
    lines = wait_until(verdict_lines, 30, "the survivor's log line")
    assert len(lines) == 1 and "(verdict written)" in lines[0], lines
    assert job[:12] + " ok" not in c.log(victim) and "verdict" not in c.log(victim), c.log(victim)
    assert c.redis("XLEN", "kf:stream:gpu") == "0"
    assert c.redis("XLEN", "kf:stream:build") == "0"
    print("kill: one verdict,", body["status"], "by", survivor, "after", body["deliveries"], "deliveries")
    return survivor


def test_server_restart(c, url, port):
    cands = [fresh(read(RELU)) for _ in range(3)]
    ids = []
    for cand in cands:
        code, body, _ = http("POST", url + "/v1/evaluations", {"problem": "level1/relu", "candidate": cand})
        assert code == 202, (code, body)
        ids.append(body["id"])
    c.kill("serve", signal.SIGKILL)
    print("server killed with", len(ids), "jobs pending")
    url = c.start_serve("serve2", ["--redis", c.redis_url], port=port)
    for job in ids:
        code, body, _ = http("GET", url + "/v1/evaluations/%s?wait=300" % job, timeout=320)
        assert code == 200 and body["state"] == "done", (code, body)
        assert body["status"] != "infra_error", body
    # Submitting again gives the same id and runs nothing new.
    code, body, _ = http("POST", url + "/v1/evaluations", {"problem": "level1/relu", "candidate": cands[0]})
    assert code == 202 and body["id"] == ids[0] and body["evaluations"][0]["state"] == "done", body
    print("restart: all", len(ids), "pending jobs completed")
    return url


def test_thousand_rewards(c, url):
    # A small set of candidates (two already done above, two new ones, one format error); 1,000
    # concurrent requests, each answered with its candidate's reward.
    relu = read(RELU)
    cands = [relu, fresh(relu), fresh(relu), "no code here", read(SLOW_RELU)]
    expected = {}

    def one(i):
        cand = cands[i % len(cands)]
        code, body, _ = http("POST", url + "/v1/reward",
                             {"problem": "level1/relu", "candidate": cand}, timeout=600)
        return i, code, body

    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=200) as pool:
        results = list(pool.map(one, range(1000)))
    elapsed = time.time() - t0
    for i, code, body in results:
        assert code == 200, (code, body)
        r = body["results"][0]
        assert r["state"] == "done", r
        expected.setdefault(i % len(cands), (r["id"], r["reward"], r["status"]))
        assert (r["id"], r["reward"], r["status"]) == expected[i % len(cands)], (r, expected)
    # Each answer matches the one stored verdict of its job.
    for k, (job, reward, status) in expected.items():
        code, body, _ = http("GET", url + "/v1/evaluations/" + job)
        assert body["status"] == status and body["verdict"].get("reward") == reward, body
    assert expected[3][2] == "format_error"
    print("1000 reward requests answered in %.1f s" % elapsed)


def test_delivery_limit(c):
    """A job already handed out twice without a verdict (its workers died) ends as infra_error
    on the next delivery, with a diagnostic, when --max-deliveries is 2."""
    import hashlib
    import json
    sha = lambda t: hashlib.sha256(t.encode()).hexdigest()
    problem = read(os.path.join(PROBLEMS, "level1", "relu.py"))
    cand = fresh(read(RELU))
    # The id covers problem, candidate and the settings digest (eval::JobKey); this job names
    # none: the delivery limit ends it before a worker compares settings.
    job_id = sha(sha(problem) + "|" + sha(cand) + "|")
    job = {"id": job_id, "problem_id": "level1/relu", "problem_hash": sha(problem),
           "problem_text": problem, "candidate": cand, "backend": "cpu", "settings": ""}
    p = "kflimit"
    c.redis("SET", p + ":job:" + job_id, json.dumps(job))
    c.redis("XGROUP", "CREATE", p + ":stream:gpu", "gpu", "0", "MKSTREAM")
    c.redis("XGROUP", "CREATE", p + ":stream:build", "build", "0", "MKSTREAM")
    entry = c.redis("XADD", p + ":stream:gpu", "*", "id", job_id)
    c.redis("XREADGROUP", "GROUP", "gpu", "ghost-1", "COUNT", "1", "STREAMS", p + ":stream:gpu", ">")
    c.redis("XCLAIM", p + ":stream:gpu", "gpu", "ghost-2", "0", entry)  # second delivery
    c.redis("HSET", p + ":errors", job_id, "the judge process died")
    c.start_worker("gpu-limit", "gpu", c.redis_url,
                   ["--prefix", p, "--max-deliveries", "2", "--reclaim-idle-ms", "500"])
    raw = wait_until(lambda: c.redis("HGET", p + ":results", job_id), 120, "the delivery-limit verdict")
    res = json.loads(raw)
    v = res["verdict"]
    assert v["status"] == "infra_error" and res["deliveries"] == 3, res
    msg = v["diagnostics"][0]["message"]
    assert "2 times without a verdict" in msg and "the judge process died" in msg, msg
    assert c.redis("XLEN", p + ":stream:gpu") == "0"
    c.kill("gpu-limit", signal.SIGTERM)
    print("delivery limit: infra_error after", res["deliveries"], "deliveries:", msg)


def test_build_worker_runs_no_lane(c):
    print("test: a build worker compiles only; it starts no judge, zygote or timing helper build")
    build = list(descendants(c.procs["build-1"].pid).values())
    gpu = list(descendants(c.procs["gpu-c"].pid).values())
    assert any("kforge_runner.build_worker" in x for x in build), build
    assert not any("kforge_runner.judge" in x or "kforge_runner.zygote" in x for x in build), build
    assert any("kforge_runner.judge" in x for x in gpu), gpu  # the check can see a lane


def body(c):
    c.redis_url = c.start_redis()
    fast = ["--reclaim-idle-ms", "3000"]
    c.start_worker("build-1", "build", c.redis_url, fast)
    c.start_worker("gpu-a", "gpu", c.redis_url, fast)
    c.start_worker("gpu-b", "gpu", c.redis_url, fast)
    port = free_port()
    url = c.start_serve("serve", ["--redis", c.redis_url], port=port)
    t0 = time.time()
    test_killed_gpu_worker(c, url)
    print("  (%.0f s)" % (time.time() - t0))
    c.start_worker("gpu-c", "gpu", c.redis_url, fast)  # back to two gpu workers
    url = test_server_restart(c, url, port)
    print("  (%.0f s)" % (time.time() - t0))
    test_thousand_rewards(c, url)
    print("  (%.0f s)" % (time.time() - t0))
    test_delivery_limit(c)
    print("  (%.0f s)" % (time.time() - t0))
    test_build_worker_runs_no_lane(c)
    code, text, _ = http("GET", url + "/metrics")
    assert "kforge_workers{role=\"gpu\"}" in text and "kforge_verdicts_total" in text, text


def main():
    run_test("test_redis", body)


if __name__ == "__main__":
    main()
