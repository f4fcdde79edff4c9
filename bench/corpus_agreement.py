#!/usr/bin/env python3
"""kforge's verdicts on public model-written kernels against the verdicts their sources recorded
(issue 14, docs/CORPORA.md for where the corpus comes from; docs/RESULTS.md for the numbers).

  bench/corpus_agreement.py static  --kforge build/kforge [--corpus .corpus] [--policy P] [--out F]
      The CPU-only stages (`kforge check`) on every sample, against its problem version: how
      many end format_error or cheat before anything is built, per source and rule, and each
      such sample that its source recorded correct (a disagreement to explain).
  bench/corpus_agreement.py merge --into DIR [--per-source N] [--corpus .corpus] [SOURCE...]
      One bench's worth of the corpus: DIR/problems/<version>-<level> (links to each source's
      problem version) and DIR/samples/<version>-<level>/<problem>/sample_<k>.py, so a single
      `kforge bench` keeps the GPU busy across every source; DIR/map.jsonl says which source
      sample each file is. --per-source N takes the first N distinct kernels of each source in
      the order of a hash of their paths (the same N always gives the same kernels, and a
      larger N only adds kernels, so a store carried between calls resumes the run); --skip K
      starts after the first K (a window of kernels not judged yet).
  bench/corpus_agreement.py compare --bench OUT [--bench OUT ...] [--corpus .corpus] [--out F]
                                    [--map DIR/map.jsonl]
      A `kforge bench` run's verdicts.jsonl per source (OUT/<source>/verdicts.jsonl), or with
      --map one merged run's OUT/verdicts.jsonl, against the recorded verdicts: agreement
      overall, per source and level, the confusion table, and every disagreement with kforge's
      reason. A kernel that its source recorded several times (CUDA-L1 lists one file for up to
      five GPUs) counts once per record, as in CORPORA.md's totals.

Recorded verdicts are "correct", "incorrect" (built, wrong or crashed) or "compile_failed".
kforge agrees with "correct" when it says ok, with "compile_failed" on compile_error, and with
"incorrect" on incorrect, runtime_error, timeout or cheat. Samples whose recorded failure was
their machine's (manifest `environment_failure`) are left out of the agreement and counted.
Standard library only.
"""
import argparse
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The problem version each source's kernels were written for (docs/CORPORA.md).
VERSIONS = {"cuda-l1": "KernelBench-6500bbc", "kb-leaderboard": "KernelBench-leaderboard",
            "kb-fork-runs": "KernelBench-129232e", "metr": "KernelBench-METR"}
# The folder prefix of each problem version in a merged tree.
TAGS = {"KernelBench-6500bbc": "v0", "KernelBench-129232e": "v01", "KernelBench-METR": "metr",
        "KernelBench-leaderboard": "lb"}
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


# Why kforge and a source disagree, from kforge's evidence (its diagnostics) and the sample's
# source patterns. Each is a reason shown by a rule with evidence, a failing trial or the
# compiler; "unexplained" is what is left, the disagreements that count against kforge.
BROKEN_EVERYWHERE = (  # load_inline cannot build these as written, on any PyTorch
    ("was not declared in this scope", "functions= names a function the C++ sources never "
     "declare (torch's generated binding does not compile)"),
    ("redefinition of ‘PyObject* PyInit_", "PYBIND11_MODULE written in the sources and "
     "functions= given too (two module definitions)"),
    ("does not name a type", "CUDA code passed as cpp_sources (compiled by the C++ compiler)"),
)
OLD_TORCH = (  # APIs that older PyTorch accepted and 2.x removed
    ("DeprecatedTypeProperties", "AT_DISPATCH on tensor.type(), removed from PyTorch"),
    ("THC/", "the THC headers, removed from PyTorch"),
    ("AT_CHECK", "AT_CHECK, removed from PyTorch (TORCH_CHECK)"),
)


def classify(m, status, diags):
    """(category, note) for a disagreement: the source's harness was fooled by a trick kforge
    catches, the kernel was written for an older PyTorch, the output is wrong, or unexplained."""
    errors = [d for d in diags if d.get("severity") == "error"]
    codes = {d.get("code") for d in errors}
    text = " ".join(d.get("message", "") for d in errors)
    pats = m.get("patterns", {})
    if status == "cheat":
        rule = next((c for c in ("H02", "H01", "H03", "H13", "H07", "H06", "H16", "H20", "H08")
                     if c in codes), sorted(codes)[0] if codes else "?")
        return "cheat " + rule, "a rule kforge enforces and the source's harness does not"
    if status == "compile_error":
        guarded = pats.get("try_guarded_build") or "H03_guard" in {d.get("code") for d in diags}
        for needle, why in BROKEN_EVERYWHERE:
            if needle in text:
                if guarded:
                    return "fallback", why + "; its try/except ran PyTorch instead, which " \
                        "is what the source timed"
                return "does not build", why
        for needle, why in OLD_TORCH:
            if needle in text:
                return "older PyTorch", why
        if guarded:
            return "fallback?", "the build fails here and a try/except runs PyTorch instead; " \
                "whether it built where the source ran is not known"
        return "compile_error", "other compiler error"
    if status == "format_error" and "no_kernel" in codes:
        return "no kernel", "plain PyTorch, no load_inline call: KernelBench counts the model " \
            "itself as an answer, kforge asks for a kernel"
    if status == "runtime_error" and "positional argument" in text:
        return "problem version", "forward takes other arguments than the problem's " \
            "get_inputs() gives: written for another version of the problem"
    if status == "runtime_error" and any(k in text for k in (
            "illegal memory access", "EXECUTION_FAILED", "unspecified launch failure",
            "misaligned address", "CUDA error")):
        return "crash", "the candidate's kernel faults on this machine (an out-of-bounds " \
            "access that the source's run did not trip over, or a later call failing on it)"
    if status == "incorrect" and any(c in codes for c in ("mismatch", "wrong_output", "nan")):
        return "wrong output", "a failing trial (the source's check passed it)"
    if m["recorded"].get("compiled") is False and status in ("ok", "incorrect", "runtime_error"):
        return "builds here", "the source's build failed; kforge's (torch 2.11, nvcc 13) did not"
    return "unexplained", ""


def content_key(corpus, source, m):
    with open(os.path.join(corpus, "samples", source, m["path"]), "rb") as f:
        return (m["level"], m["problem"], hashlib.sha256(f.read()).hexdigest())


def merge(args):
    """Writes the merged tree (see the module's help) and returns nothing."""
    unknown = set(args.sources) - set(VERSIONS)
    if unknown:
        sys.exit("unknown sources %s (known: %s)" % (sorted(unknown), " ".join(VERSIONS)))
    into = os.path.abspath(args.into)
    shutil.rmtree(into, ignore_errors=True)
    mapping = []
    for source in args.sources or list(VERSIONS):
        version = VERSIONS[source]
        rows = list(enumerate(manifest(args.corpus, source)))
        if args.problems:  # these problems' kernels alone (e.g. a class found, re-run)
            wanted = set(args.problems.split(","))
            rows = [(i, m) for i, m in rows if m["problem"] in wanted]
        rows.sort(key=lambda r: hashlib.sha256(r[1]["path"].encode()).hexdigest())
        chosen = {}  # content key -> (row number, the first manifest row with that content)
        for row, m in rows:
            key = content_key(args.corpus, source, m)
            if key not in chosen:
                chosen[key] = (row, m)
        # The window [skip, skip + per_source) of the distinct kernels in hash order.
        order = list(chosen.items())[args.skip:]
        if args.per_source is not None:
            order = order[:args.per_source]
        chosen = dict(order)
        for row, m in sorted(chosen.values(), key=lambda r: r[0]):
            level = "%s-%s" % (TAGS[version], m["level"])
            link = os.path.join(into, "problems", level)
            if not os.path.islink(link):
                os.makedirs(os.path.dirname(link), exist_ok=True)
                os.symlink(os.path.abspath(os.path.join(args.corpus, version, m["level"])), link)
            # Unique across sources and the same in every merge: the source's number, its row.
            index = 100000 * sorted(VERSIONS).index(source) + row
            rel = os.path.join(level, m["problem"], "sample_%d.py" % index)
            dst = os.path.join(into, "samples", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(args.corpus, "samples", source, m["path"]), dst)
            mapping.append({"merged": rel, "source": source, "path": m["path"]})
    with open(os.path.join(into, "map.jsonl"), "w") as f:
        for r in mapping:
            f.write(json.dumps(r) + "\n")
    print("%d kernels in %s" % (len(mapping), into))


def bench_records(args):
    """{source: {sample path below samples/<source>/: bench record}} from the --bench folders."""
    out = collections.defaultdict(dict)
    merged = {}
    if args.map:
        with open(args.map) as f:
            merged = {r["merged"]: r for r in map(json.loads, f) if r}
    for bench in args.bench:
        folders = [bench] if merged else [os.path.join(bench, s) for s in VERSIONS]
        for folder in folders:
            # verdicts.partial.jsonl: what a bench that was killed outright had finished.
            vpath = next((p for p in (os.path.join(folder, "verdicts.jsonl"),
                                      os.path.join(folder, "verdicts.partial.jsonl"))
                          if os.path.exists(p)), None)
            if vpath is None:
                continue
            with open(vpath) as f:
                for line in f:
                    v = json.loads(line)
                    path = os.path.normpath(v["sample"])
                    if merged:
                        hit = merged.get(path[path.rfind("/samples/") + len("/samples/"):])
                        if hit:
                            out[hit["source"]][os.path.normpath(hit["path"])] = v
                        continue
                    source = os.path.basename(folder)
                    marker = "/samples/%s/" % source
                    out[source][path[path.rfind(marker) + len(marker):]
                                if marker in path else path] = v
    return out


def compare(args):
    rows, left_out = [], collections.Counter()
    records = bench_records(args)
    for source in VERSIONS:
        # A verdict is the kernel's on its problem: every record of the same file shares it.
        by_key = {}
        for m in manifest(args.corpus, source):
            v = records[source].get(os.path.normpath(m["path"]))
            if v is not None:
                by_key[content_key(args.corpus, source, m)] = v
        for m in manifest(args.corpus, source):
            v = by_key.get(content_key(args.corpus, source, m))
            if v is None:
                continue
            want = recorded(m["recorded"])
            status = v["verdict"]["status"]
            if m["recorded"].get("environment_failure") or status == "infra_error":
                left_out["their machine" if m["recorded"].get("environment_failure")
                         else "infra_error"] += 1
                continue
            diags = v["verdict"].get("diagnostics", [])
            agrees = status in AGREES[want]
            category, note = ("", "") if agrees else classify(m, status, diags)
            rows.append({"source": source, "level": m["level"], "problem": m["problem"],
                         "sample": m["sample"], "path": m["path"], "recorded": want,
                         "status": status, "agrees": agrees, "category": category,
                         "note": note,
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
    by_category = collections.Counter(r["category"] for r in rows if not r["agrees"])
    unexplained = by_category.get("unexplained", 0)
    report += ["", "## Why they disagree", "",
               "| reason | samples |", "|---|---:|"]
    report += ["| %s | %d |" % kv for kv in by_category.most_common()]
    report += ["", "Agreement counting every disagreement with a shown reason as kforge's "
               "evidence against the recorded verdict: %d of %d (%.1f%%); unexplained: %d." % (
                   len(rows) - unexplained, len(rows),
                   100.0 * (len(rows) - unexplained) / max(len(rows), 1), unexplained)]
    report += ["", "## Disagreements", ""]
    for r in sorted(rows, key=lambda r: (r["category"], r["source"], r["level"], r["problem"])):
        if not r["agrees"]:
            report.append("- [%s] %s %s/%s sample %s: recorded %s, kforge %s (%s)" % (
                r["category"],
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
    c.add_argument("--map", help="map.jsonl of a merged run (merge)")
    m = sub.add_parser("merge")
    m.add_argument("--into", required=True)
    m.add_argument("--per-source", type=int)
    m.add_argument("--skip", type=int, default=0,
                   help="leave out the first SKIP kernels of each source (judged before)")
    m.add_argument("--problems", default="",
                   help="NAME,NAME: only these problems' kernels (the problem folder's name, "
                        "e.g. 33_VanillaRNN), every level")
    m.add_argument("sources", nargs="*", help="default: " + " ".join(VERSIONS))
    for p in (s, c, m):
        p.add_argument("--corpus", default=os.path.join(ROOT, ".corpus"))
    for p in (s, c):
        p.add_argument("--out", help="write OUT.md and OUT.jsonl too")
    args = ap.parse_args()
    {"static": static, "compare": compare, "merge": merge}[args.mode](args)


if __name__ == "__main__":
    main()
