#!/usr/bin/env python3
"""kforge's RL loop end to end, with a scripted policy instead of a model:

  kforge synth (seeded)  ->  kforge serve over the problems (registered, loopback)
  -> round 1: G samples per problem from scripted_policy.py, one POST /v1/groups
  -> the service restarted on the same --cache (BDR must survive it)
  -> round 2: GET /v1/bdr/sample replays the all-failed prompts; G new samples each
  -> kforge data rft over every verdict recorded  ->  checks  ->  summary.json

usage: loop.py --kforge build/kforge --backend cpu --problems 10 --group-size 4 --out OUT

OUT holds problems/ (synth's), cache/ (the service's store, unless --cache), serve-*.log,
verdicts.jsonl (one line per sample: the verdict, the candidate, its round, kind and mutation;
the records `kforge data` reads), rft.jsonl and summary.json. Exit 0 when every check passed,
1 when one failed (each is in summary.json's "checks"), 2 when a step could not run (synth,
the service, data): the message names the step and its log. Every wait has a deadline
(--deadline-s), so the loop fails rather than hangs. Standard library only.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scripted_policy as sp  # noqa: E402
from loop_report import checks, overall, print_summary, quantiles  # noqa: E402
from loop_service import Deadline, LoopError, Service, http, run_logged, tail  # noqa: E402

ROOT = sp.ROOT


def start_service(args, name):
    flags = ["--problems", args.problem_dir, "--cache", args.cache, "--backend", args.backend,
             "--policy", args.policy, "--bdr-size", str(args.bdr_size),
             "--bdr-seed", str(args.seed)] + eval_flags(args)
    if args.devices:
        flags += ["--devices", args.devices]
    return Service(args.kforge, flags, args.out, name, ROOT)


def eval_flags(args):
    flags = ["--trials", str(args.trials), "--timing-budget-ms", str(args.timing_budget_ms),
             "--call-timeout-s", str(args.call_timeout_s)]
    if args.python:
        flags += ["--python", args.python]
    if args.no_baselines:
        flags.append("--no-baselines")
    if args.build_workers:
        flags += ["--build-workers", str(args.build_workers)]
    return flags


def run_synth(args, deadline):
    manifest = os.path.join(args.problem_dir, "manifest.jsonl")
    if args.reuse_problems and os.path.exists(manifest):
        return 0.0, "reused"
    levels = [int(x) for x in args.levels.split(",")]
    count = -(-args.problems // len(levels))  # per level, rounded up
    argv = [args.kforge, "synth", "--out", args.problem_dir, "--count", str(count),
            "--levels", args.levels, "--seed", str(args.seed), "--backend", args.backend]
    for flag, value in [("--python", args.python), ("--target-ms", args.target_ms),
                        ("--calibration", args.calibration), ("--dtypes", args.dtypes),
                        ("--ops", args.ops), ("--max-mib", args.max_mib)]:
        if value:
            argv += [flag, str(value)]
    argv += ["--problem-timeout-s", str(args.synth_problem_timeout_s)]
    if os.path.isdir(args.problem_dir) and os.listdir(args.problem_dir):
        argv.append("--force")
    log = os.path.join(args.out, "synth.log")
    t0 = time.monotonic()
    rc = run_logged(argv, log, deadline.left("kforge synth"), "kforge synth", ROOT)
    # 1: fewer problems than asked at some level (what was kept is used); else a failure.
    if rc not in (0, 1) or not os.path.exists(manifest):
        raise LoopError("kforge synth exited with %d; %s:\n%s" % (rc, log, tail(log)))
    return time.monotonic() - t0, "exit %d" % rc


def load_problems(args):
    with open(os.path.join(args.problem_dir, "manifest.jsonl")) as f:
        entries = [json.loads(l) for l in f if l.strip()]
    # Per level in index order, then cut to N: levels stay balanced.
    entries.sort(key=lambda e: (e["index"], e["level"]))
    entries = sorted(entries[:args.problems], key=lambda e: e["id"])
    return [sp.Problem(e["id"], os.path.join(args.problem_dir, e["path"])) for e in entries]


def prompt_of(p, backend):
    lang = "CUDA" if backend == "cuda" else "C++"
    return ("Write ModelNew, a faster version of Model that computes the same function with "
            "your own %s kernels built by torch.utils.cpp_extension.load_inline.\n\n"
            "```python\n%s```\n" % (lang, p.source))


class Recorder:
    """Every sample's verdict as a `kforge data` record (docs/TRAINING.md, bench records):
    `verdict`, `candidate` (the code kforge evaluated), `reply` and `problem_path`, plus the
    loop's own `round`, `group_id`, `kind`, `mutation`, `variant` and `expect`."""

    def __init__(self, path):
        self.path = path
        self.rows = []
        open(path, "w").close()

    def add(self, round_, group_id, p, sample, reply, result):
        verdict = result.get("verdict") or {}
        code = reply.split("```python\n", 1)[1].split("```", 1)[0] if sample.code else ""
        row = {"round": round_, "group_id": group_id, "problem": p.id, "problem_path": p.path,
               "kind": sample.kind, "mutation": sample.mutation, "variant": sample.variant,
               "expect": sample.expect, "status": result.get("status"),
               "reward": result.get("reward"), "state": result.get("state"),
               "verdict": verdict, "reply": reply, "candidate": code}
        self.rows.append(row)
        with open(self.path, "a") as f:
            f.write(json.dumps(row) + "\n")


def make_group(args, policy, p, round_, nonce, meta):
    samples = [policy.sample(p, round_, i) for i in range(args.group_size)]
    replies = [s.reply("run %s, round %d, sample %d" % (nonce, round_, i))
               for i, s in enumerate(samples)]
    group = {"problem": p.id, "prompt": prompt_of(p, args.backend), "metadata": meta,
             "group_id": "r%d/%s" % (round_, p.id), "candidates": replies}
    return group, samples


def send_groups(url, groups, deadline, timeout_s):
    t0 = time.monotonic()
    wait = min(timeout_s, deadline.left("POST /v1/groups"))
    code, out = http("POST", url + "/v1/groups", {"groups": groups, "timeout_s": int(wait)},
                     timeout=wait + 60)
    if code != 200:
        raise LoopError("POST /v1/groups answered %s: %s" % (code, str(out)[:500]))
    return out["groups"], time.monotonic() - t0


def run_round(args, url, policy, problems, round_, nonce, rec, deadline):
    groups, samples = [], []
    for p, meta in problems:
        g, s = make_group(args, policy, p, round_, nonce, meta)
        groups.append(g)
        samples.append(s)
    answers, wall = send_groups(url, groups, deadline, args.request_timeout_s)
    # A sample without a reward (infra_error: e.g. the machine too busy to time it; kforge
    # never stores those) is the service's miss, not the policy's: send its group again, as a
    # trainer would. Samples that have a verdict are answered from the store (a job's id is
    # its content hash), and the group's statistics and BDR decision are made on all of it.
    retried = 0
    for attempt in range(args.retries):
        again = [i for i, a in enumerate(answers) if None in a["rewards"]]
        if not again:
            break
        retried += len(again)
        time.sleep(min(args.retry_wait_s * (attempt + 1), deadline.left("a group sent again")))
        more, w = send_groups(url, [groups[i] for i in again], deadline, args.request_timeout_s)
        wall += w
        for i, a in zip(again, more):
            answers[i] = a
    by_id = {p.id: p for p, _ in problems}
    for g, s, a in zip(groups, samples, answers):
        for sample, reply, result in zip(s, g["candidates"], a["results"]):
            rec.add(round_, g["group_id"], by_id[g["problem"]], sample, reply, result)
    rows = [r for r in rec.rows if r["round"] == round_]
    statuses = {}
    for r in rows:
        statuses[r["status"] or "none"] = statuses.get(r["status"] or "none", 0) + 1
    by_kind = {}
    for r in rows:
        k = by_kind.setdefault(r["kind"], {})
        k[r["status"] or "none"] = k.get(r["status"] or "none", 0) + 1
    done = sum(1 for r in rows if r["reward"] is not None)
    return {"groups": len(groups), "samples": len(rows), "wall_s": round(wall, 2),
            "groups_resent": retried,
            "verdicts_per_s": round(done / wall, 3) if wall > 0 else None,
            "status": statuses, "status_by_kind": by_kind,
            "reward": quantiles(r["reward"] for r in rows),
            "reward_by_kind": {k: quantiles(r["reward"] for r in rows if r["kind"] == k)
                               for k in sorted(by_kind)},
            "all_failed": sum(1 for a in answers if a["all_failed"]),
            "bdr_recorded": sum(1 for a in answers if a.get("bdr_recorded")),
            "answers": answers}


def bdr_buffered(url):
    code, st = http("GET", url + "/v1/bdr")
    if code != 200:
        raise LoopError("GET /v1/bdr answered %s: %s" % (code, st))
    return st["buffered"]


def drain_bdr(url):
    """Empties a store's BDR left by an earlier run on the same --cache; returns the count."""
    n = 0
    while True:
        code, s = http("GET", url + "/v1/bdr/sample?n=4096&p=1")
        if code != 200 or not s["replay"]:
            return n
        n += len(s["replay"])


def run_rft(args, deadline):
    out = os.path.join(args.out, "rft.jsonl")
    argv = [args.kforge, "data", "rft", "--verdicts", os.path.join(args.out, "verdicts.jsonl"),
            "--problems", args.problem_dir, "--min-speedup", str(args.rft_min_speedup),
            "--k", str(args.rft_k), "--backend", args.backend, "--out", out]
    if args.python:
        argv += ["--python", args.python]
    log = os.path.join(args.out, "data-rft.log")
    rc = run_logged(argv, log, min(300, deadline.left("kforge data rft")), "kforge data rft",
                    ROOT)
    # 1: no example (the rft_nonempty check says so); 2, 3: it could not run.
    if rc not in (0, 1) or not os.path.exists(out):
        raise LoopError("kforge data rft exited with %d; %s:\n%s" % (rc, log, tail(log)))
    with open(out) as f:
        return [json.loads(l) for l in f if l.strip()]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--backend", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--problems", type=int, default=30, help="problems to synthesize (N)")
    ap.add_argument("--group-size", type=int, default=8, help="samples per prompt (G)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1, help="synth's and the policy's seed")
    ap.add_argument("--levels", default="1,2,3")
    ap.add_argument("--target-ms", type=float, help="synth --target-ms")
    ap.add_argument("--calibration", help="synth --calibration (default: synth's)")
    ap.add_argument("--dtypes", help="synth --dtypes (default: synth's for the backend)")
    ap.add_argument("--ops", help="synth --ops")
    ap.add_argument("--max-mib", type=float, help="synth --max-mib")
    ap.add_argument("--synth-problem-timeout-s", type=int, default=60,
                    help="synth --problem-timeout-s: a problem whose checks take longer is "
                    "dropped (default 60; the loop's whole time is bounded by --deadline-s)")
    ap.add_argument("--reuse-problems", action="store_true",
                    help="use OUT/problems when it holds a synth run")
    ap.add_argument("--python", help="the runner's interpreter (synth, serve, data)")
    ap.add_argument("--cache", help="the service's --cache (default OUT/cache); BDR left in "
                    "it by an earlier run is emptied first")
    ap.add_argument("--policy", choices=["kernelbench", "strict"], default="kernelbench",
                    help="kforge's legality policy; the scripted policy's honest answers leave "
                    "non-elementwise ops to PyTorch, so under strict fewer problems are solvable")
    ap.add_argument("--variants", default=",".join(sp.lib.VARIANTS),
                    help="kernel library variants honest answers use (one build each)")
    ap.add_argument("--p-honest", type=float, default=0.4)
    ap.add_argument("--devices", help="serve --devices (lanes)")
    ap.add_argument("--build-workers", type=int)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--timing-budget-ms", type=float, default=500)
    ap.add_argument("--call-timeout-s", type=int, default=30)
    ap.add_argument("--no-baselines", action="store_true",
                    help="no eager/compile timing: no speedups, every ok reward is 1")
    ap.add_argument("--bdr-size", type=int, default=1024)
    ap.add_argument("--no-restart", action="store_true",
                    help="keep one service for both rounds")
    ap.add_argument("--rft-min-speedup", type=float, default=0.0)
    ap.add_argument("--rft-k", type=int, default=4)
    ap.add_argument("--cheat-reward", type=float, default=-1.0)
    ap.add_argument("--request-timeout-s", type=int, default=900)
    ap.add_argument("--retries", type=int, default=2,
                    help="times a group with a sample left without a reward is sent again")
    ap.add_argument("--retry-wait-s", type=float, default=5,
                    help="pause before the n-th resend: n times this (a busy machine calms)")
    ap.add_argument("--deadline-s", type=float, default=3600, help="the whole run's limit")
    args = ap.parse_args(argv)
    args.out = os.path.abspath(args.out)
    args.kforge = os.path.abspath(args.kforge)
    args.problem_dir = os.path.join(args.out, "problems")
    args.cache = os.path.abspath(args.cache or os.path.join(args.out, "cache"))
    return args


def finish_round(summary, key, r):
    """Moves a round's group answers out of its statistics, into summary["groups"]."""
    answers = r.pop("answers")
    summary["rounds"][key] = r
    summary["groups"][key] = [{"group_id": a["group_id"], "rewards": a["rewards"],
                               "all_failed": a["all_failed"]} for a in answers]


def run(args, summary, services, deadline):
    """The loop's steps; fills `summary` as it goes, so a step that fails leaves the rest."""
    synth_s, synth_how = run_synth(args, deadline)
    problems = load_problems(args)
    if not problems:
        raise LoopError("synth kept no problem; %s" % os.path.join(args.out, "synth.log"))
    policy = sp.ScriptedPolicy(args.backend, args.policy, args.seed, args.variants.split(","),
                               args.p_honest)
    summary["synth"] = {"wall_s": round(synth_s, 2), "how": synth_how, "problems": len(problems),
                        "solvable": sum(p.solvable(args.policy) for p in problems)}
    nonce = uuid.uuid4().hex[:12]
    rec = Recorder(os.path.join(args.out, "verdicts.jsonl"))
    svc = start_service(args, "serve-1")
    services.append(svc)
    svc.wait_up(deadline)
    bdr = summary["bdr"]
    bdr["drained_at_start"] = drain_bdr(svc.url)

    fresh = [(p, {"index": i, "problem": p.id}) for i, p in enumerate(problems)]
    r1 = run_round(args, svc.url, policy, fresh, 1, nonce, rec, deadline)
    finish_round(summary, "1", r1)
    bdr["after_round1"] = bdr_buffered(svc.url)
    if not args.no_restart:
        svc.stop()
        svc = start_service(args, "serve-2")
        services.append(svc)
        svc.wait_up(deadline)
    bdr["after_restart"] = bdr_buffered(svc.url)
    code, got = http("GET", svc.url + "/v1/bdr/sample?n=%d&p=1" % len(problems))
    if code != 200:
        raise LoopError("GET /v1/bdr/sample answered %s: %s" % (code, got))
    bdr["replayed"] = len(got["replay"])
    by_id = {p.id: p for p in problems}
    replays = [(by_id[e["problem"]], dict(e.get("metadata") or {}, replay_of=e["group_id"]))
               for e in got["replay"] if e.get("problem") in by_id]
    if replays:
        r2 = run_round(args, svc.url, policy, replays, 2, nonce, rec, deadline)
        finish_round(summary, "2", r2)
    bdr["after_round2"] = bdr_buffered(svc.url)
    svc.stop()
    summary["overall"] = overall(rec.rows, summary["rounds"])
    rft = run_rft(args, deadline)
    summary["rft"] = {"examples": len(rft),
                      "problems": len({e["metadata"].get("problem") for e in rft})}
    summary["checks"] = checks(args, summary, rec.rows, rft)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    t_start = time.monotonic()
    summary = {"args": vars(args), "backend": args.backend, "policy": args.policy,
               "group_size": args.group_size, "rounds": {}, "groups": {}, "bdr": {},
               "checks": []}
    services = []

    def terminated(signum, frame):
        raise LoopError("stopped by signal %d" % signum)
    # A wrapper's `timeout` sends SIGTERM: end the services and write the summary first.
    signal.signal(signal.SIGTERM, terminated)
    grace_s = 60
    try:
        run(args, summary, services, Deadline(args.deadline_s))
        rc = 0 if summary["checks"] and all(c["passed"] for c in summary["checks"]) else 1
    except (LoopError, OSError, subprocess.SubprocessError) as e:
        summary["error"] = "%s: %s" % (type(e).__name__, e) if not isinstance(e, LoopError) \
            else str(e)
        print("loop: " + summary["error"], file=sys.stderr)
        rc = 2
        grace_s = 5  # out of time or broken: do not wait for the jobs in hand
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for svc in services:
            svc.stop(grace_s)
        summary["wall_s"] = round(time.monotonic() - t_start, 2)
        with open(os.path.join(args.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
    print_summary(summary)
    return rc


if __name__ == "__main__":
    sys.exit(main())
