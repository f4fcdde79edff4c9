"""What bench/trainer_load.py checks and reports: percentiles, the exactly-once check, settled
samples, expected against got, what a kill did, the report and its text summary.
Pure functions of the samples' records. Standard library only."""

def percentile(xs, p):
    """Nearest-rank percentile (the smallest x with at least p% of the values <= x)."""
    if not xs:
        return None
    xs = sorted(xs)
    k = max(1, -(-len(xs) * p // 100))  # ceil without floats
    return xs[int(min(k, len(xs))) - 1]


def check_exactly_once(samples):
    """Problems with the answers: every sample answered exactly once, distinct job ids, each
    verdict about the text sent. Returns a list of strings, empty when all is well."""
    bad, ids = [], {}
    for s in samples:
        n = s.get("answers", 0)
        if n != 1:
            bad.append("%s: %d answers" % (s["sample"], n))
        if s.get("id"):
            if s["id"] in ids:
                bad.append("%s and %s share job %s" % (ids[s["id"]], s["sample"], s["id"][:12]))
            ids[s["id"]] = s["sample"]
        if s.get("verdict_candidate_sha256") and \
                s["verdict_candidate_sha256"] != s.get("evaluated_sha256"):
            bad.append("%s: the verdict is about another text" % s["sample"])
    return bad


def settled(s):
    """A sample ended: a verdict with its reward, or an explicit no-reward (infra_error, lost,
    OpenRLHF's no_reward in an answer given before the deadline); not a job still queued or
    running, nor an OpenRLHF sample without a reward at the deadline ("unfinished")."""
    if s.get("reward") is not None:
        return True
    return s.get("status") == "infra_error" or s.get("state") == "lost" or \
        s.get("no_reward") == 1.0 and s.get("state") not in ("queued", "running", "unfinished")


def expectation_table(samples):
    """{kind: {expected status: {got: n}}} over samples whose status is known."""
    t = {}
    for s in samples:
        got = s.get("status") or ("no_reward" if s.get("reward") is None else "?")
        row = t.setdefault(s["kind"], {}).setdefault(s["expect"], {})
        row[got] = row.get(got, 0) + 1
    return t


def verdicts_written(delta, samples):
    """(verdicts the service wrote during the run, by its /metrics; samples it had to evaluate:
    all but those answered from its store or by its front). More written than evaluated means a
    job's verdict was written twice; it holds only while no other client uses the service."""
    written = sum(v for k, v in delta.items() if k.startswith("kforge_verdicts_total{"))
    return int(written), len([s for s in samples if s.get("worker") not in ("store", "front")])


def rewarded_wrongly(samples):
    """Cheating or broken samples whose reward is above 0: never allowed."""
    return [s for s in samples if s["expect"] != "ok" and (s.get("reward") or 0) > 0]


def counts(xs):
    out = {}
    for x in xs:
        out[str(x)] = out.get(str(x), 0) + 1
    return dict(sorted(out.items()))


def latency(xs):
    r = lambda x: None if x is None else round(x, 2)  # noqa: E731
    return {"n": len(xs), "p50_s": r(percentile(xs, 50)), "p90_s": r(percentile(xs, 90)),
            "p99_s": r(percentile(xs, 99)), "max_s": r(max(xs) if xs else None)}


def kill_outcome(kill, samples):
    """What the samples that met the kill got: a verdict after a retry, or infra_error."""
    if kill is None:
        return None
    retried = [s["sample"] for s in samples if (s.get("deliveries") or 0) > 1]
    infra = [s["sample"] for s in samples if s.get("status") == "infra_error" or
             (s.get("no_reward") == 1.0 and s.get("reward") is None and settled(s))]
    unsettled = [s["sample"] for s in samples if not settled(s)]
    parts = []
    if not kill.get("killed"):
        parts.append("nothing was killed (%s)" % kill.get("what"))
    else:
        parts.append("killed %s at %.1f s" % (kill["what"], kill["at_s"]))
    parts.append("%d samples got their verdict after a retry (deliveries > 1)" % len(retried))
    parts.append("%d got an explicit infra_error / no reward" % len(infra))
    parts.append("%d were left without either" % len(unsettled))
    return dict(kill, retried=len(retried), infra_error=len(infra), unsettled=len(unsettled),
                retried_samples=retried[:20], infra_samples=infra[:20],
                outcome="; ".join(parts))


def build_report(a, engine, samples, groups, walls, client, before, after, kill):
    lost = check_exactly_once(samples)
    unsettled = [s["sample"] for s in samples if not settled(s)]
    wrong = rewarded_wrongly(samples)
    audit = [(s["sample"], s["audit"]) for s in samples if s.get("audit")]
    known = [s for s in samples if s.get("status")]
    mism = [s for s in known if s["status"] != s["expect"]]
    wall = sum(walls)
    verdicts = [s for s in samples if s.get("status") or s.get("reward") is not None]
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in sorted(set(before) | set(after))}
    written, evaluated = verdicts_written(delta, samples)
    checks = [
        {"check": "every_sample_answered_once", "passed": not lost, "detail": lost[:20]},
        {"check": "no_verdict_written_twice", "passed": written <= evaluated or not before,
         "detail": "the service wrote %d verdicts for %d samples it evaluated" % (
             written, evaluated) if before and after else "/metrics could not be read"},
        {"check": "every_sample_settled", "passed": not unsettled,
         "detail": "%d without a verdict or an explicit no-reward: %s" % (len(unsettled),
                                                                          unsettled[:20])},
        {"check": "cheats_never_rewarded", "passed": not [s for s in wrong if s["kind"] ==
                                                          "cheat"],
         "detail": [(s["sample"], s["source"], s["reward"]) for s in wrong
                    if s["kind"] == "cheat"][:20]},
        {"check": "broken_never_rewarded", "passed": not [s for s in wrong if s["kind"] !=
                                                          "cheat"],
         "detail": [(s["sample"], s["source"], s["reward"]) for s in wrong
                    if s["kind"] != "cheat"][:20]},
        {"check": "openrlhf_verdicts_found", "passed": not audit, "detail": audit[:20]},
    ]
    if a.kill_worker_after_s is not None:
        checks.append({"check": "worker_killed", "passed": bool(kill.get("killed")),
                       "detail": kill.get("what")})
    rows = [{k: s.get(k) for k in ("sample", "route", "problem", "kind", "mutation", "family",
                                   "source", "expect", "status", "reward", "state", "worker",
                                   "deliveries", "no_reward", "late", "error", "audit",
                                   "diagnostic")}
            for s in samples]
    by = lambda key: {k: counts(s.get("status") or "no_reward" for s in samples  # noqa: E731
                                if s[key] == k) for k in sorted({s[key] for s in samples})}
    return {
        "url": a.url, "engine": engine, "backend": a.backend, "policy": a.policy,
        "families": a.families, "run_id": a.run_id,
        "sizes": {"steps": len(walls), "problems": a.problems, "group_size": a.group_size,
                  "openrlhf_share": a.openrlhf_share},
        "groups": len(groups), "samples": len(samples), "wall_s": round(wall, 1),
        "step_wall_s": [round(w, 1) for w in walls],
        "group_latency": {"all": latency([g["latency_s"] for g in groups if "latency_s" in g]),
                          "groups": latency([g["latency_s"] for g in groups
                                             if g["route"] == "groups" and "latency_s" in g]),
                          "openrlhf": latency([g["latency_s"] for g in groups
                                               if g["route"] == "openrlhf" and "latency_s" in g])},
        "verdicts_per_hour": round(len(verdicts) / wall * 3600) if wall else None,
        "rewards_per_hour": round(len([s for s in samples if s.get("reward") is not None]) /
                                  wall * 3600) if wall else None,
        "status": counts(s.get("status") or "no_reward" for s in samples),
        "status_by_kind": by("kind"), "status_by_route": by("route"),
        "status_by_family": by("family"),
        "expect_vs_got": expectation_table(samples),
        "as_expected": {"n": len(known) - len(mism), "of": len(known)},
        "mismatches": [{k: s.get(k) for k in ("sample", "source", "mutation", "expect",
                                               "status", "reward", "error", "diagnostic")}
                       for s in mism][:40],
        "http": dict(sorted(client.codes.items())), "metrics_delta": delta,
        "kill": kill_outcome(kill, samples), "checks": checks,
        "passed": all(c["passed"] for c in checks), "samples_detail": rows,
    }


def summary_text(r):
    gl = r["group_latency"]["all"]
    lines = [
        "trainer_load %s: %s engine, %s backend, %d steps, %d groups, %d samples in %.1f s" % (
            r["run_id"], r["engine"], r["backend"], r["sizes"]["steps"], r["groups"],
            r["samples"], r["wall_s"]),
        "group latency p50 %s s, p99 %s s (groups %s / openrlhf %s); %s verdicts/hour" % (
            gl["p50_s"], gl["p99_s"], r["group_latency"]["groups"]["p50_s"],
            r["group_latency"]["openrlhf"]["p50_s"], r["verdicts_per_hour"]),
        "status: " + ", ".join("%s %d" % kv for kv in r["status"].items()),
        "as expected: %d of %d with a known status" % (r["as_expected"]["n"],
                                                       r["as_expected"]["of"]),
    ]
    for m in r["mismatches"][:8]:
        lines.append("  expected %s, got %s: %s (%s)" % (m["expect"], m["status"], m["source"],
                                                         m["mutation"]))
    if r["kill"]:
        lines.append("kill: " + r["kill"]["outcome"])
    for c in r["checks"]:
        lines.append("%s %s%s" % ("PASS" if c["passed"] else "FAIL", c["check"],
                                  "" if c["passed"] else ": %s" % (c["detail"],)))
    return "\n".join(lines)
