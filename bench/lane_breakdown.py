#!/usr/bin/env python3
"""Where a bench's lane time went (issue 19, item 2: lane time per candidate).

    python3 bench/lane_breakdown.py OUT [--json]

OUT is a `kforge bench --out` folder (results.json and verdicts.jsonl). The lane time of the run
(results.json run.lane_busy_ms, summed over lanes) is split into:

  warm-ups              problems prepared ahead on idle lanes (run.warm_ms): the judge loading
                        the reference and calling it in each mode (torch.compile compiles),
                        once per problem; until 2026-12-06 it timed the reference alone too
  spawn                 the candidate's process started (execute.spawn_ms)
  load                  the candidate module loaded: import, load_inline of the built artifact
                        (execute.ms - spawn_ms); where verdicts carry execute.load_phases_ms
                        (since 2026-12-06), its phases are printed under it: host_start
                        (on a GPU, CUDA initialised for the process), device_start,
                        extension_wait, extension_load, code, model, to_device
                        (runner/kforge_runner/candidate.py, op_load)
  run-time builds       artifacts built while loading (execute.run_time_build_ms)
  trial inputs          inputs and the reference's outputs made per trial (correctness.prepare_ms)
  trial calls           the candidate's forward on each trial (correctness.call_ms)
  profiled call         the forward under the profiler (correctness.profiled_call_ms)
  checking              outputs compared with the reference's (correctness.check_ms)
  correctness, other    correctness.ms less the four above (the ablation and ghost replays among
                        them)
  timing                the timed calls (timing.ms)
  baselines             eager and torch.compile timed for a problem not warmed ahead (baselines.ms)
  not in a stage        the rest: lane time no verdict accounts for (the judge's per-candidate
                        set-up, a re-verification of an implausible speedup, retries)

Only candidates evaluated in this run count (from_store verdicts cost no lane time), each
distinct candidate once. Prints one row per part: seconds, milliseconds per candidate and the
share of lane time; --json prints the same as one object (the load's phases as load_phases_ms).
"""
import argparse
import json
import os
import sys

PARTS = ["warm-ups", "spawn", "load", "run-time builds", "trial inputs", "trial calls",
         "profiled call", "checking", "correctness, other", "timing", "baselines",
         "not in a stage"]


def stage(v, name):
    return next((s for s in v.get("stages", []) if s.get("name") == name), {})


def load_phases(verdict_lines):
    """The load's phases (execute.load_phases_ms) summed over the candidates counted, ms."""
    phases, seen = {}, set()
    for rec in verdict_lines:
        v = rec["verdict"]
        key = (v.get("problem", {}).get("hash"), v.get("candidate", {}).get("hash"))
        if rec.get("from_store") or key in seen:
            continue
        seen.add(key)
        for name, ms in stage(v, "execute").get("load_phases_ms", {}).items():
            phases[name] = phases.get(name, 0.0) + ms
    return phases


def breakdown(results, verdict_lines):
    """Milliseconds per part, the candidates counted and the run's lane time."""
    run = results["run"]
    lane_ms = sum(run.get("lane_busy_ms") or [])
    parts = dict.fromkeys(PARTS, 0.0)
    parts["warm-ups"] = run.get("warm_ms", 0.0)
    seen = set()
    for rec in verdict_lines:
        if rec.get("from_store"):
            continue
        v = rec["verdict"]
        key = (v.get("problem", {}).get("hash"), v.get("candidate", {}).get("hash"))
        if key in seen:
            continue
        seen.add(key)
        ex = stage(v, "execute")
        spawn = ex.get("spawn_ms", 0.0)
        rtb = ex.get("run_time_build_ms", 0.0)
        parts["spawn"] += spawn
        parts["run-time builds"] += rtb
        # The execute stage's ms is spawn + load less the run-time builds (eval.cc).
        parts["load"] += max(0.0, ex.get("ms", 0.0) - spawn)
        co = stage(v, "correctness")
        known = 0.0
        for field, part in [("prepare_ms", "trial inputs"), ("call_ms", "trial calls"),
                            ("profiled_call_ms", "profiled call"), ("check_ms", "checking")]:
            parts[part] += co.get(field, 0.0)
            known += co.get(field, 0.0)
        parts["correctness, other"] += max(0.0, co.get("ms", 0.0) - known)
        parts["timing"] += stage(v, "timing").get("ms", 0.0)
        parts["baselines"] += stage(v, "baselines").get("ms", 0.0)
    accounted = sum(ms for name, ms in parts.items() if name != "not in a stage")
    parts["not in a stage"] = max(0.0, lane_ms - accounted)
    return parts, len(seen), lane_ms


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="a kforge bench --out folder")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    try:
        with open(os.path.join(a.out, "results.json")) as f:
            results = json.load(f)
        with open(os.path.join(a.out, "verdicts.jsonl")) as f:
            lines = [json.loads(l) for l in f if l.strip()]
    except (OSError, ValueError) as e:
        sys.exit("lane_breakdown: %s is not a finished bench folder: %s" % (a.out, e))
    parts, n, lane_ms = breakdown(results, lines)
    phases = load_phases(lines)
    lanes = results["run"].get("lanes", 1)
    if a.json:
        print(json.dumps({"candidates": n, "lanes": lanes, "lane_ms": lane_ms,
                          "lane_ms_per_candidate": lane_ms / n if n else None,
                          "parts_ms": parts, "load_phases_ms": phases}, indent=2))
        return
    print("%d candidates evaluated, %d lane(s), %.1f lane-s: %.0f ms per candidate" % (
        n, lanes, lane_ms / 1000, lane_ms / n if n else 0))
    print("%-20s %10s %14s %7s" % ("part", "s", "ms/candidate", "share"))
    for name in PARTS:
        ms = parts[name]
        print("%-20s %10.2f %14.1f %6.1f%%" % (name, ms / 1000, ms / n if n else 0,
                                               100 * ms / lane_ms if lane_ms else 0))
        if name == "load":
            for phase in sorted(phases, key=phases.get, reverse=True):
                ms = phases[phase]
                print("  %-18s %10.2f %14.1f %6.1f%%" % (
                    phase, ms / 1000, ms / n if n else 0, 100 * ms / lane_ms if lane_ms else 0))


if __name__ == "__main__":
    main()
