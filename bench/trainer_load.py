#!/usr/bin/env python3
"""A scripted trainer against a running `kforge serve`: RL steps of GRPO groups.

Each step samples --problems problems and --group-size answers for each (default 8 x 16), a mix
of honest kernels, broken ones and cheats, and sends every group at once, half through
POST /v1/groups and half through OpenRLHF's POST /get_reward (--openrlhf-share), as a trainer
posting a step's rewards concurrently would. The answers come from the repository's own files,
each with a header that says the verdict it must get (`# kforge-expect:`):
  honest   examples/<backend>/*.py (and, where the backend is cuda, examples/triton_cuda/)
  broken   examples/<backend>/broken/ (compile error, crash, wrong output, no ModelNew),
           examples/triton/broken/ (cuda), the red team's files that must end `incorrect`, and
           three made here from an honest file of the group's problem: a missing header
           (compile_error), a raise in forward (runtime_error), a reply without code
           (format_error)
  cheat    tests/redteam/<backend>/ and tests/redteam/triton/ (cuda) files whose expectation
           is `cheat`, and an honest file with time.perf_counter patched (H08)
Each sample carries a nonce comment, so it is a job of its own while its build is shared.

Checked and reported (JSON to --out, a short text on stdout): every sample got exactly one
answer (nothing lost, nothing duplicated: one result per sample, distinct job ids, each verdict
naming the SHA-256 of the text that was sent), a verdict or an explicit no-reward (infra_error,
lost; OpenRLHF's no_reward) for each, no cheat and no broken sample rewarded above 0, and
expected against got per kind; group latency p50/p99, verdicts per hour, status counts.

--kill-worker-after-s S: S seconds into the run (once the target runs a candidate, waiting up
to --kill-wait-s more), SIGKILL one GPU worker with its runner processes (`kforge worker --role
gpu` where the service runs on Redis; else one lane's judge and zygote of the in-process
`kforge serve` on the URL's port, found through /proc), then check that still nothing was lost
and say what became of the samples in flight: a verdict after a retry (deliveries > 1), or an
explicit infra_error.

  build/kforge serve --port 8000 --problems problems --backend cpu --no-baselines &
  python3 bench/trainer_load.py --url http://127.0.0.1:8000 --backend cpu \
      --problems 2 --group-size 4 --out /tmp/trainer.json

Exit: 0 every check passed, 1 one failed, 2 the run could not start. Standard library only.
"""
import argparse
import concurrent.futures
import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.error
import urllib.request

from trainer_kill import Killer
from trainer_mix import catalogue, choose_problems, plan_step, render, sha256
from trainer_report import build_report, summary_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHATML = "<|im_start|>system\nYou write fast GPU kernels.<|im_end|>\n<|im_start|>user\n%s" \
         "<|im_end|>\n<|im_start|>assistant\n"


class Client:
    def __init__(self, url, token):
        self.url, self.token = url.rstrip("/"), token
        self.lock = threading.Lock()
        self.codes = {}

    def call(self, method, path, body=None, timeout=60, retry_until=None):
        """(code, parsed body); code None when no answer came. A 503 is retried after its
        Retry-After, and a connection that failed (refused, reset, timed out) up to twice, while
        retry_until allows: job ids are content hashes, so sending a request again starts no
        job twice."""
        failures = 0
        while True:
            data = None if body is None else json.dumps(body).encode()
            req = urllib.request.Request(self.url + path, data=data, method=method)
            req.add_header("Content-Type", "application/json")
            if self.token:
                req.add_header("Authorization", "Bearer " + self.token)
            again = retry_until is not None and time.monotonic() < retry_until
            try:
                with urllib.request.urlopen(req, timeout=timeout) as r:
                    code, text = r.status, r.read()
            except urllib.error.HTTPError as e:
                code, text = e.code, e.read()
                if code == 503 and again:
                    self.count(path, code)
                    time.sleep(float(e.headers.get("Retry-After") or 1))
                    continue
            except (OSError, http.client.HTTPException) as e:
                self.count(path, type(e).__name__)
                failures += 1
                if again and failures <= 2:
                    time.sleep(2)
                    continue
                return None, {"error": "%s: %s" % (type(e).__name__, e)}
            self.count(path, code)
            try:
                return code, json.loads(text)
            except ValueError:
                return code, {"error": text[:300].decode(errors="replace")}

    def count(self, path, code):
        k = "%s %s" % (path.split("?")[0], code)
        with self.lock:
            self.codes[k] = self.codes.get(k, 0) + 1


def read_metrics(client):
    req = urllib.request.Request(client.url + "/metrics")
    if client.token:
        req.add_header("Authorization", "Bearer " + client.token)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read().decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        if line.startswith(("kforge_verdicts_total{", "kforge_group_samples_total ",
                            "kforge_jobs_in_flight ", "kforge_overload_total ")):
            k, v = line.rsplit(" ", 1)
            out[k] = float(v)
    return out


# ---------------------------------------------------------------- one step
def fill_result(s, r):
    """Copy a /v1/groups or /v1/evaluations result into the sample's record."""
    s["id"] = r.get("id")
    s["state"] = r.get("state")
    s["status"] = r.get("status")
    if "reward" in r:
        s["reward"] = r.get("reward")
    elif r.get("verdict") is not None:
        s["reward"] = r["verdict"].get("reward")
    s["worker"] = r.get("worker")
    s["deliveries"] = r.get("deliveries")
    v = r.get("verdict") or {}
    s["verdict_candidate_sha256"] = (v.get("candidate") or {}).get("hash")
    d = (v.get("diagnostics") or [None])[0]
    if d and v.get("status") != "ok":
        s["diagnostic"] = "%s: %s" % (d.get("code"), (d.get("message") or "")[:300])
    if r.get("error"):
        s["error"] = r["error"]


def send_groups(client, groups, step, deadline):
    """One POST /v1/groups for `groups` (each {"problem", "id", "samples"})."""
    left = max(1.0, deadline - time.monotonic())
    body = {"timeout_s": round(left, 1), "groups": [
        {"problem": g["problem"], "group_id": g["id"], "candidates": [s["sent"] for s in
                                                                     g["samples"]],
         "prompt": "Write ModelNew for %s, faster than the reference." % g["problem"],
         "metadata": {"step": step}} for g in groups]}
    t0 = time.monotonic()
    code, out = client.call("POST", "/v1/groups", body, timeout=left + 120, retry_until=deadline)
    t1 = time.monotonic()
    got = out.get("groups") if code == 200 and isinstance(out, dict) else None
    for k, g in enumerate(groups):
        g["latency_s"] = t1 - t0
        res = got[k].get("results", []) if got and k < len(got) else []
        if not got or len(res) != len(g["samples"]):
            g["error"] = "HTTP %s: %s" % (code, str(out)[:300]) if not got else \
                "%d results for %d samples" % (len(res), len(g["samples"]))
        for s, r in zip(g["samples"], res):
            s["answers"] += 1
            s["evaluated_sha256"] = sha256(s["sent"])
            fill_result(s, r)


def send_openrlhf(client, g, batch, deadline, rng):
    """The group's samples as OpenRLHF queries (chat template, the prompt, the answer, the
    end-of-turn token; some left padding), in micro-batches of `batch`, one after another."""
    prompt = CHATML % ("Write ModelNew for %s, faster than the reference." % g["problem"])
    t0 = time.monotonic()
    for i in range(0, len(g["samples"]), batch):
        part = g["samples"][i:i + batch]
        queries = ["<|endoftext|>" * rng.randint(0, 3) + prompt + s["sent"] + "<|im_end|>"
                   for s in part]
        left = max(1.0, deadline - time.monotonic())
        t_req = time.monotonic()
        code, out = client.call("POST", "/get_reward?timeout_s=%d" % left,
                                {"query": queries, "prompts": [prompt] * len(part),
                                 "labels": [g["problem"]] * len(part)},
                                timeout=left + 120, retry_until=deadline)
        rewards = out.get("rewards") if code == 200 and isinstance(out, dict) else None
        if rewards is None or len(rewards) != len(part):
            g["error"] = "HTTP %s: %s" % (code, str(out)[:300]) if rewards is None else \
                "%d rewards for %d queries" % (len(rewards), len(part))
            rewards = rewards or []
        logs = out.get("extra_logs", {}) if isinstance(out, dict) else {}
        for j, (s, r) in enumerate(zip(part, rewards)):
            s["answers"] += 1
            s["no_reward"] = logs.get("no_reward", [0.0] * len(part))[j]
            s["reward"] = None if s["no_reward"] == 1.0 else r
            # No reward in an answer that came at the service's deadline may be a job still
            # running (OpenRLHF cannot tell); before it, it is the job's infra_error.
            if s["reward"] is None and time.monotonic() - t_req >= int(left) - 2:
                s["state"] = "unfinished"
            off = int(logs.get("answer_offset_bytes", [0] * len(part))[j])
            n = int(logs.get("answer_bytes", [0] * len(part))[j])
            s["evaluated"] = queries[j].encode()[off:off + n].decode(errors="replace")
            s["evaluated_sha256"] = sha256(s["evaluated"])
            if (out.get("errors") or [None] * len(part))[j]:
                s["error"] = out["errors"][j]
    g["latency_s"] = time.monotonic() - t0


def run_step(client, cat, a, step, deadline, rng):
    problems = choose_problems(cat, a.problems, step, a.seed)
    groups = plan_step(cat, problems, a.group_size, rng, [a.p_honest, a.p_broken, a.p_cheat])
    n_o = int(round(a.openrlhf_share * len(groups)))
    routes = ["openrlhf"] * n_o + ["groups"] * (len(groups) - n_o)
    rng.shuffle(routes)
    for gi, (g, route) in enumerate(zip(groups, routes)):
        g.update(id="%s-s%d-g%d" % (a.run_id, step, gi), route=route, step=step)
        for si, s in enumerate(g["samples"]):
            s.update(sample="%s-%d" % (g["id"], si), route=route, step=step, group=g["id"],
                     answers=0, reward=None)
            s["sent"] = render(s, s["sample"], rng)
    mine = [g for g in groups if g["route"] == "groups"]
    jobs = [("groups", mine[i:i + a.groups_per_request])
            for i in range(0, len(mine), a.groups_per_request)]
    jobs += [("openrlhf", [g]) for g in groups if g["route"] == "openrlhf"]
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(jobs))) as pool:
        futs = [pool.submit(send_groups, client, gs, step, deadline) if r == "groups" else
                pool.submit(send_openrlhf, client, gs[0], a.openrlhf_batch, deadline,
                            random.Random(rng.random())) for r, gs in jobs]
        for f in futs:
            f.result()
    return groups, time.monotonic() - t0


def poll_late(client, samples, deadline):
    """Samples of /v1/groups still queued or running when their request ended: wait for them
    by id, as a trainer that polls would."""
    for s in samples:
        while s.get("id") and s.get("state") in ("queued", "running") and \
                time.monotonic() < deadline:
            wait = int(min(60, max(1, deadline - time.monotonic())))
            code, out = client.call("GET", "/v1/evaluations/%s?wait=%d" % (s["id"], wait),
                                    timeout=wait + 60)
            if code != 200:
                s["error"] = "GET /v1/evaluations: HTTP %s" % code
                break
            fill_result(s, out)
            s["late"] = True


def audit_openrlhf(client, samples, deadline):
    """OpenRLHF answers carry no job ids: the answer each rewarded sample's span names is sent
    again as an evaluation (a known job starts nothing) to read its verdict, worker and
    deliveries. Samples without a reward are left alone: sending one again would run it."""
    todo = [s for s in samples if s["route"] == "openrlhf" and s.get("reward") is not None
            and s.get("evaluated")]
    for i in range(0, len(todo), 256):
        part = todo[i:i + 256]
        code, out = client.call("POST", "/v1/evaluations", {"items": [
            {"problem": s["problem"], "candidate": s["evaluated"]} for s in part]},
            timeout=120, retry_until=deadline)
        evs = out.get("evaluations", []) if code == 200 or code == 202 else []
        for s, r in zip(part, evs):
            reward = s["reward"]
            fill_result(s, r)
            s["reward"] = reward
            if r.get("state") != "done":
                s["audit"] = "the job was %s when looked up again" % r.get("state")
            elif r.get("verdict", {}).get("reward") != reward:
                s["audit"] = "reward %s, its verdict says %s" % (reward, r["verdict"].get(
                    "reward"))
        for s in part[len(evs):]:
            s["audit"] = "lookup failed: HTTP %s" % code


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", required=True, help="the service, e.g. http://127.0.0.1:8000")
    ap.add_argument("--backend", default="cuda", choices=["cuda", "cpu"],
                    help="whose examples and red team to send (the service's backend)")
    ap.add_argument("--policy", default="strict", choices=["strict", "kernelbench"],
                    help="the service's --policy: which expectation headers hold")
    ap.add_argument("--families", default=None,
                    help="load_inline,triton (default: both on cuda, load_inline on cpu)")
    ap.add_argument("--problems", type=int, default=8, help="problems (groups) per step")
    ap.add_argument("--group-size", type=int, default=16, help="samples per group")
    ap.add_argument("--steps", type=int, default=1, help="training steps, one after another")
    ap.add_argument("--p-honest", type=float, default=0.4)
    ap.add_argument("--p-broken", type=float, default=0.3)
    ap.add_argument("--p-cheat", type=float, default=0.3)
    ap.add_argument("--openrlhf-share", type=float, default=0.5,
                    help="fraction of a step's groups sent through /get_reward")
    ap.add_argument("--openrlhf-batch", type=int, default=16,
                    help="queries per /get_reward request (OpenRLHF's micro-batch)")
    ap.add_argument("--groups-per-request", type=int, default=1,
                    help="groups per POST /v1/groups (a whole step: --problems)")
    ap.add_argument("--deadline-s", type=float, default=900,
                    help="the whole run: no step starts after it, every wait ends by it")
    ap.add_argument("--kill-worker-after-s", type=float, default=None)
    ap.add_argument("--kill-wait-s", type=float, default=60,
                    help="after --kill-worker-after-s, how long to wait for a running candidate")
    ap.add_argument("--token-env", help="environment variable holding the bearer token")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--run-id", default=None, help="names the samples (default: time-based)")
    ap.add_argument("--out", help="the report as JSON")
    a = ap.parse_args()
    a.families = (a.families or ("load_inline,triton" if a.backend == "cuda" else
                                 "load_inline")).split(",")
    a.run_id = a.run_id or "r%x" % int(time.time())
    client = Client(a.url, os.environ.get(a.token_env) if a.token_env else None)
    t_start = time.monotonic()
    deadline = t_start + a.deadline_s
    code, health = client.call("GET", "/healthz", timeout=30)
    code_p, probs = client.call("GET", "/v1/problems", timeout=30)
    if code != 200 or code_p != 200:
        print("trainer_load: the service at %s is not ready: /healthz %s %s" % (
            a.url, code, health), file=sys.stderr)
        return 2
    engine = health.get("engine", "?")
    registered = {p["id"] for p in probs.get("problems", [])}
    cat = [e for e in catalogue(ROOT, a.backend, a.policy, a.families)
           if e["problem"] in registered]
    if not any(e["kind"] == "honest" for e in cat):
        print("trainer_load: no candidate of %s matches a problem the service has" % a.backend,
              file=sys.stderr)
        return 2
    rng = random.Random(a.seed)
    before = read_metrics(client)
    killer = None
    if a.kill_worker_after_s is not None:
        port = int(a.url.rstrip("/").rsplit(":", 1)[1]) if a.url.count(":") > 1 else 80
        killer = Killer(a.kill_worker_after_s, a.kill_wait_s, engine, port, t_start)
        killer.start()
    groups, walls = [], []
    for step in range(a.steps):
        if time.monotonic() >= deadline - 5:
            break
        g, wall = run_step(client, cat, a, step, deadline, rng)
        groups += g
        walls.append(wall)
        print("step %d: %d groups, %d samples, %.1f s" % (
            step, len(g), sum(len(x["samples"]) for x in g), wall), flush=True)
    samples = [s for g in groups for s in g["samples"]]
    poll_late(client, [s for s in samples if s["route"] == "groups"], deadline)
    if killer:
        killer.stop.set()
    after = read_metrics(client)
    audit_openrlhf(client, samples, deadline + 60)
    r = build_report(a, engine, samples, groups, walls, client, before, after,
                     killer.report if killer else None)
    text = summary_text(r)
    r["summary"] = text
    if a.out:
        with open(a.out, "w") as f:
            json.dump(r, f, indent=1)
    print(text)
    return 0 if r["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
