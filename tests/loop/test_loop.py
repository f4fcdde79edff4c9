"""The RL loop of examples/rl/loop.py, small, on the CPU backend: synth -> scripted policy in
groups through kforge serve -> the service restarted -> BDR replays -> kforge data rft.

Asserts what the loop is for: every group got G rewards; all-failed groups went to BDR, the
buffer survived the restart (SQLite store under --cache) and its prompts were replayed as
round 2; every sample got the verdict its mutation calls for, and every cheat the cheat reward;
the rft set is non-empty and holds only kernels whose verdict was ok.

usage: test_loop.py KFORGE [CACHE]    (CACHE: the service's --cache, kept between runs for its
                                       build artifacts; the loop empties its BDR first)
"""
import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "rl"))
import loop  # noqa: E402

G = 4


def main():
    kforge = sys.argv[1]
    out = tempfile.mkdtemp(prefix="kforge-loop-test-")
    args = ["--kforge", kforge, "--backend", "cpu", "--python", "/usr/bin/python3",
            "--problems", "8", "--levels", "1,2", "--group-size", str(G), "--seed", "3",
            "--out", out, "--target-ms", "0.3", "--dtypes", "fp32,bf16",
            # One library variant: the run's one real build (the compile error stops at once).
            "--variants", "loop",
            # The test is about the loop, not timing: no baselines, few short trials.
            "--no-baselines", "--trials", "2", "--timing-budget-ms", "100",
            "--devices", "0,1", "--build-workers", "2", "--deadline-s", "840",
            # On a machine loaded by other work, kforge answers infra_error for a candidate it
            # could not time fairly ("busy"); the loop sends such groups again, as a trainer
            # would, and every group must end with G rewards.
            "--retries", "5", "--retry-wait-s", "3"]
    if len(sys.argv) > 2:
        args += ["--cache", sys.argv[2]]
    ok = False
    try:
        rc = loop.main(args)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        assert "error" not in s, s.get("error")
        with open(os.path.join(out, "verdicts.jsonl")) as f:
            rows = [json.loads(l) for l in f if l.strip()]
        check(s, rows, out)
        assert rc == 0, [c for c in s["checks"] if not c["passed"]]
        ok = True
    finally:
        if ok:
            shutil.rmtree(out, ignore_errors=True)
        else:
            print("loop output kept in", out)
    print("test_loop: PASS")


def check(s, rows, out):
    r1, r2 = s["rounds"]["1"], s["rounds"].get("2")
    n = s["synth"]["problems"]
    assert n >= 6, s["synth"]
    # Every group of both rounds: G rewards, none missing.
    for k, groups in s["groups"].items():
        for g in groups:
            assert len(g["rewards"]) == G and None not in g["rewards"], (k, g)
    assert r1["groups"] == n and r1["samples"] == n * G, r1
    # All-failed groups: recorded in BDR, kept across the restart, replayed as round 2.
    failed = [g["group_id"] for g in s["groups"]["1"] if g["all_failed"]]
    assert failed and r1["bdr_recorded"] == len(failed), (failed, r1)
    bdr = s["bdr"]
    assert bdr["after_round1"] == bdr["after_restart"] == len(failed), bdr
    assert r2 and bdr["replayed"] == len(failed) == r2["groups"], (bdr, r2)
    replayed = sorted(g["group_id"] for g in s["groups"]["2"])
    assert replayed == sorted("r2/" + f[len("r1/"):] for f in failed), (replayed, failed)
    # Replays that failed again are back in the buffer; the others left it.
    assert bdr["after_round2"] == r2["all_failed"], (bdr, r2)
    # Each mutation got its verdict; cheats the cheat reward, honest kernels passed.
    for r in rows:
        assert r["status"] == r["expect"], (r["group_id"], r["mutation"], r["status"],
                                            r["verdict"].get("feedback", "")[:300])
    kinds = {r["kind"] for r in rows}
    assert kinds == {"honest", "broken", "cheat"}, kinds
    cheats = [r for r in rows if r["kind"] == "cheat"]
    assert all(r["reward"] == -1.0 for r in cheats), [(r["mutation"], r["reward"]) for r in cheats]
    assert all(r["reward"] == 1.0 for r in rows if r["kind"] == "honest")  # no baselines
    # rft: non-empty, only kernels kforge passed (ok is correct and legal).
    ok = {r["verdict"]["candidate"]["hash"] for r in rows if r["status"] == "ok"}
    with open(os.path.join(out, "rft.jsonl")) as f:
        rft = [json.loads(l) for l in f if l.strip()]
    assert rft and s["rft"]["examples"] == len(rft), s["rft"]
    for e in rft:
        assert e["metadata"]["candidate_hash"] in ok, e["metadata"]
        assert [m["role"] for m in e["messages"]] == ["system", "user", "assistant"], e
    print("loop: %d problems, round 1 %s, bdr %s, round 2 %s, rft %d examples, %.1f s"
          % (n, r1["status"], bdr, r2["status"], len(rft), s["wall_s"]))


if __name__ == "__main__":
    main()
