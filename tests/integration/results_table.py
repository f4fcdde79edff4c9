"""Markdown table of an eval_examples.py --results file (one verdict per example).

Columns split each candidate's time into the build stage (compile or cache look-up) and the
stages that run on the device: execute (fork, import, CUDA start-up, ModelNew), correctness,
timing and baselines.
"""
import json
import sys


def fmt(v, digits=4):
    if v is None:
        return "—"
    if isinstance(v, float):
        return "%.*g" % (digits, v)
    return str(v)


def stage_ms(v, name):
    for s in v["stages"]:
        if s["name"] == name:
            return s["ms"]
    return None


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print("| example | expected | verdict | trials | build s | execute s | correctness s | "
          "timing s | baselines s | wall s | candidate ms | eager ms | compile ms | vs eager | "
          "vs compile | reward | first diagnostic |")
    print("|" + "---|" * 17)
    for r in rows:
        v = r["verdict"]
        if v is None or "wall_s" not in r:  # a run that failed with no verdict to check
            print("| %s | %s | failed: %s |" % (r["example"], r["expect"],
                                                 (r.get("failed") or "no verdict").splitlines()[0][:90].replace("|", "/")) +
                  " |" * 14)
            continue
        t = v["timing"]
        cand = t["candidate_ms"]["median"] if t.get("candidate_ms") else None
        sec = lambda n: fmt(stage_ms(v, n) / 1000, 3) if stage_ms(v, n) is not None else "—"
        diag = next((d for d in v["diagnostics"] if d["severity"] == "error"), None)
        dtext = ("%s: %s" % (diag["code"], diag["message"].splitlines()[0][:90])).replace("|", "/") if diag else ""
        print("| %s | %s | %s | %d/%d | %s | %s | %s | %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s |" % (
            r["example"], r["expect"], v["status"], v["correct_trials"]["passed"],
            v["correct_trials"]["total"], sec("build"), sec("execute"), sec("correctness"),
            sec("timing"), sec("baselines"), r["wall_s"], fmt(cand), fmt(t.get("eager_ms")),
            fmt(t.get("compile_ms")), fmt(v["speedup"]["vs_eager"], 3),
            fmt(v["speedup"]["vs_compile"], 3), fmt(v["reward"], 3), dtext))


if __name__ == "__main__":
    main(sys.argv[1])
