"""The numbers and checks of examples/rl/loop.py's summary: reward quantiles, per-stage times,
totals over a run's samples, the checks a run must pass, and the lines it prints.

A row is one sample as loop.py records it (verdicts.jsonl): `round`, `group_id`, `kind`,
`mutation`, `expect`, `status`, `reward`, `verdict`, ... Standard library only.
"""
import json


def quantiles(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None

    def q(f):
        k = f * (len(xs) - 1)
        lo = int(k)
        hi = min(lo + 1, len(xs) - 1)
        return round(xs[lo] + (xs[hi] - xs[lo]) * (k - lo), 6)
    return {"n": len(xs), "min": xs[0], "p25": q(0.25), "median": q(0.5), "p75": q(0.75),
            "max": xs[-1], "mean": round(sum(xs) / len(xs), 6)}


def stage_times(rows):
    """Per pipeline stage (extract, static, build, execute, correctness, timing): how many
    verdicts reached it, their median and summed milliseconds."""
    ms = {}
    for r in rows:
        for st in r["verdict"].get("stages") or []:
            ms.setdefault(st["name"], []).append(st.get("ms") or 0)
    return {k: {"n": len(v), "median_ms": quantiles(v)["median"], "sum_s": round(sum(v) / 1e3, 2)}
            for k, v in sorted(ms.items())}


def overall(rows, rounds):
    done = sum(1 for r in rows if r["reward"] is not None)
    eval_wall = sum(r["wall_s"] for r in rounds.values())
    return {"samples": len(rows), "verdicts": done, "stages": stage_times(rows),
            "status": {s: sum(1 for r in rows if (r["status"] or "none") == s)
                       for s in sorted({r["status"] or "none" for r in rows})},
            "reward": quantiles(r["reward"] for r in rows),
            "eval_wall_s": round(eval_wall, 2),
            "verdicts_per_s": round(done / eval_wall, 3) if eval_wall else None}


def checks(args, summary, rows, rft):
    """What a run must show; each {check, passed, detail}."""
    rounds, bdr = summary["rounds"], summary["bdr"]
    out = []
    incomplete = {k: [g["group_id"] for g in gs if None in g["rewards"]]
                  for k, gs in summary["groups"].items()}
    out.append(("every_group_rewarded", not any(incomplete.values()),
                {"groups_missing_rewards": incomplete}))
    # No broken or cheating sample may pass (that would be a hacked reward), and each must get
    # the status its mutation calls for.
    unexpected = [(r["group_id"], r["mutation"], r["status"]) for r in rows
                  if r["kind"] != "honest" and r["status"] != r["expect"]]
    out.append(("broken_and_cheats_as_expected", not unexpected, unexpected[:20]))
    # Honest answers are correct by construction, up to rounding: one that fails is a finding
    # about the problem (its tolerance against its conditioning) or about kforge, listed here.
    honest = [r for r in rows if r["kind"] == "honest"]
    failed = [(r["group_id"], r["variant"], r["status"],
               next((d["message"][:160] for d in r["verdict"].get("diagnostics", [])
                     if d.get("severity") == "error"), "")) for r in honest if r["status"] != "ok"]
    out.append(("honest_answers_pass", bool(honest) and not failed,
                {"honest": len(honest), "failed": failed[:10]}))
    cheats = [r for r in rows if r["kind"] == "cheat"]
    out.append(("cheats_get_cheat_reward",
                bool(cheats) and all(r["status"] == "cheat" and r["reward"] == args.cheat_reward
                                     for r in cheats),
                "%d cheats, rewards %s" % (len(cheats),
                                           sorted({str(r["reward"]) for r in cheats}))))
    r1 = rounds["1"]
    out.append(("bdr_recorded_all_failed", 0 < r1["bdr_recorded"] == r1["all_failed"],
                "%d all-failed, %d recorded" % (r1["all_failed"], r1["bdr_recorded"])))
    out.append(("bdr_survived_restart", bdr["after_round1"] == bdr["after_restart"] > 0, bdr))
    out.append(("bdr_replayed", bdr["replayed"] == bdr["after_restart"] and
                rounds.get("2", {}).get("groups", 0) == bdr["replayed"], bdr))
    ok = {r["verdict"].get("candidate", {}).get("hash") for r in rows if r["status"] == "ok"}
    bad = [e["metadata"].get("candidate_hash") for e in rft
           if e["metadata"].get("candidate_hash") not in ok]
    out.append(("rft_nonempty", len(rft) > 0, "%d examples" % len(rft)))
    out.append(("rft_only_ok_kernels", not bad and all(
        e["messages"][-1]["role"] == "assistant" and "load_inline" in e["messages"][-1]["content"]
        for e in rft), {"not_ok": bad[:5]}))
    return [{"check": n, "passed": bool(p), "detail": d} for n, p, d in out]


def print_summary(s):
    for k, r in sorted(s.get("rounds", {}).items()):
        rw = r["reward"] or {}
        print("round %s: %d groups, %d samples in %.1f s (%.2f verdicts/s); all-failed %d; "
              "status %s; reward min %s p25 %s median %s p75 %s max %s"
              % (k, r["groups"], r["samples"], r["wall_s"], r["verdicts_per_s"] or 0,
                 r["all_failed"], r["status"], rw.get("min"), rw.get("p25"), rw.get("median"),
                 rw.get("p75"), rw.get("max")))
    if "bdr" in s:
        print("bdr:", s["bdr"])
    if "rft" in s:
        print("rft: %d examples over %d problems" % (s["rft"]["examples"], s["rft"]["problems"]))
    for c in s.get("checks", []):
        print("%s %s %s" % ("PASS" if c["passed"] else "FAIL", c["check"],
                            json.dumps(c["detail"])[:300]))
    print("wall %.1f s%s" % (s["wall_s"], ("; error: " + s["error"]) if "error" in s else ""))
