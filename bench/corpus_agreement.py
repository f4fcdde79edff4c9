#!/usr/bin/env python3
"""kforge's verdicts on public model-written kernels against the verdicts their sources recorded
(issue 14, docs/CORPORA.md for where the corpus comes from; docs/RESULTS.md for the numbers).

  bench/corpus_agreement.py static  --kforge build/kforge [--corpus .corpus] [--policy P] [--out F]
      The CPU-only stages (`kforge check`) on every sample, against its problem version: how
      many end format_error or cheat before anything is built, per source and rule, and each
      such sample that its source recorded correct (a disagreement to explain).
  bench/corpus_agreement.py compare --bench OUT [--bench OUT ...] [--corpus .corpus] [--out F]
      A `kforge bench` run's verdicts.jsonl per source (OUT/<source>/verdicts.jsonl, as
      bench/corpus_h200.sh writes them) against the recorded verdicts: agreement overall, per
      source and level, the confusion table, and every disagreement with kforge's reason.

Recorded verdicts are "correct", "incorrect" (built, wrong or crashed) or "compile_failed".
kforge agrees with "correct" when it says ok, with "compile_failed" on compile_error, and with
"incorrect" on incorrect, runtime_error, timeout or cheat. Samples whose recorded failure was
their machine's (manifest `environment_failure`) are left out of the agreement and counted.
Standard library only.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The problem version each source's kernels were written for (docs/CORPORA.md).
VERSIONS = {"cuda-l1": "KernelBench-6500bbc", "kb-leaderboard": "KernelBench-6500bbc",
            "kb-fork-runs": "KernelBench-129232e", "metr": "KernelBench-METR"}
AGREES = {"correct": {"ok"}, "compile_failed": {"compile_error"},
          "incorrect": {"incorrect", "runtime_error", "timeout", "cheat"}}


def recorded(rec):
    if not rec.get("compiled", True):
        return "compile_failed"
    return "correct" if rec.get("correct") else "incorrect"


def manifest(corpus, source):
    with open(os.path.join(corpus, "samples", source, "manifest.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def problem_file(corpus, source, m):
    return os.path.join(corpus, VERSIONS[source], m["level"], m["problem"] + ".py")


def static(args):
    rows = []
    for source in VERSIONS:
        by_problem = collections.defaultdict(list)
        for m in manifest(args.corpus, source):
            by_problem[problem_file(args.corpus, source, m)].append(m)
        for problem, ms in sorted(by_problem.items()):
            paths = [os.path.join(args.corpus, "samples", source, m["path"]) for m in ms]
            cmd = [args.kforge, "check", "--json", "--policy", args.policy] + paths
            if os.path.exists(problem):
                cmd += ["--problem", problem]
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode not in (0, 1):
                sys.exit("kforge check failed on %s: %s" % (problem, out.stderr))
            for m, line in zip(ms, out.stdout.splitlines()):
                r = json.loads(line)
                rows.append({"source": source, "level": m["level"], "problem": m["problem"],
                             "sample": m["sample"], "path": m["path"],
                             "recorded": recorded(m["recorded"]), "outcome": r["outcome"],
                             "rules": sorted({d["code"] for d in r["diagnostics"]
                                              if d["severity"] == "error"}),
                             "first": next((d["message"] for d in r["diagnostics"]
                                            if d["severity"] == "error"), ""),
                             "calls": r["load_inline_calls"],
                             "resolved": r["resolved_statically"]})
    report = ["# Static stage on the corpus (`kforge check --policy %s`)" % args.policy, "",
              "| source | samples | pass | cheat | format_error | recorded correct but stopped |",
              "|---|---:|---:|---:|---:|---:|"]
    for source in VERSIONS:
        rs = [r for r in rows if r["source"] == source]
        c = collections.Counter(r["outcome"] for r in rs)
        stopped = sum(1 for r in rs if r["recorded"] == "correct" and r["outcome"] != "pass")
        report.append("| %s | %d | %d | %d | %d | %d |" % (source, len(rs), c["pass"], c["cheat"],
                                                          c["format_error"], stopped))
    rules = collections.Counter(rule for r in rows for rule in r["rules"])
    report += ["", "Rules that stopped samples: " +
               ", ".join("%s %d" % kv for kv in rules.most_common()), "",
               "## Stopped samples their source recorded correct", ""]
    for r in rows:
        if r["recorded"] == "correct" and r["outcome"] != "pass":
            report.append("- %s %s/%s sample %s: %s %s: %s" % (
                r["source"], r["level"], r["problem"], r["sample"], r["outcome"],
                ",".join(r["rules"]), r["first"][:200]))
    emit(args.out, rows, report)


def compare(args):
    rows, left_out = [], collections.Counter()
    for bench in args.bench:
        for source in VERSIONS:
            vpath = os.path.join(bench, source, "verdicts.jsonl")
            if not os.path.exists(vpath):
                continue
            by_path = {}  # sample path below samples/<source>/ -> bench record
            marker = "/samples/%s/" % source
            with open(vpath) as f:
                for line in f:
                    v = json.loads(line)
                    path = os.path.normpath(v["sample"])
                    by_path[path[path.rfind(marker) + len(marker):] if marker in path else path] = v
            for m in manifest(args.corpus, source):
                v = by_path.get(os.path.normpath(m["path"]))
                if v is None:
                    continue
                want = recorded(m["recorded"])
                status = v["verdict"]["status"]
                if m["recorded"].get("environment_failure") or status == "infra_error":
                    left_out["their machine" if m["recorded"].get("environment_failure")
                             else "infra_error"] += 1
                    continue
                diags = v["verdict"].get("diagnostics", [])
                rows.append({"source": source, "level": m["level"], "problem": m["problem"],
                             "sample": m["sample"], "recorded": want, "status": status,
                             "agrees": status in AGREES[want],
                             "reason": next((d["code"] + ": " + d["message"] for d in diags
                                             if d.get("severity") == "error"), "")})
    agree = sum(r["agrees"] for r in rows)
    report = ["# kforge vs recorded verdicts", "",
              "%d of %d samples agree (%.1f%%); left out: %s" % (
                  agree, len(rows), 100.0 * agree / max(len(rows), 1), dict(left_out)), "",
              "| source | level | samples | agree | % |", "|---|---|---:|---:|---:|"]
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["source"], r["level"])].append(r)
    for (source, level), rs in sorted(groups.items()):
        a = sum(r["agrees"] for r in rs)
        report.append("| %s | %s | %d | %d | %.1f |" % (source, level, len(rs), a,
                                                       100.0 * a / len(rs)))
    confusion = collections.Counter((r["recorded"], r["status"]) for r in rows)
    report += ["", "| recorded | kforge | samples |", "|---|---|---:|"]
    report += ["| %s | %s | %d |" % (k[0], k[1], n) for k, n in sorted(confusion.items())]
    report += ["", "## Disagreements", ""]
    for r in rows:
        if not r["agrees"]:
            report.append("- %s %s/%s sample %s: recorded %s, kforge %s (%s)" % (
                r["source"], r["level"], r["problem"], r["sample"], r["recorded"], r["status"],
                r["reason"][:200]))
    emit(args.out, rows, report)


def emit(out, rows, report):
    text = "\n".join(report) + "\n"
    if out:
        with open(out + ".jsonl", "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        with open(out + ".md", "w") as f:
            f.write(text)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("static")
    s.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    s.add_argument("--policy", default="kernelbench", choices=["strict", "kernelbench"])
    c = sub.add_parser("compare")
    c.add_argument("--bench", action="append", required=True)
    for p in (s, c):
        p.add_argument("--corpus", default=os.path.join(ROOT, ".corpus"))
        p.add_argument("--out", help="write OUT.md and OUT.jsonl too")
    args = ap.parse_args()
    static(args) if args.mode == "static" else compare(args)


if __name__ == "__main__":
    main()
