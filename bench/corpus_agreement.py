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
                                    [--map DIR/map.jsonl] [--other-policy-bench OUT ...]
                                    [--rulings FILE] [--judge TEXT]
      A `kforge bench` run's verdicts.jsonl per source (OUT/<source>/verdicts.jsonl), or with
      --map one merged run's OUT/verdicts.jsonl, against the recorded verdicts: agreement
      overall, per source and level, the confusion table, and every disagreement in one of
      five classes (CLASSES: source harness flaw, named policy difference, problem version,
      environment, kforge error or unexplained) with its evidence: the rule and the stage
      that decided it, the failing trials with their errors and tolerance, the compiler's
      error, the source's recorded error. The per-source table sets named policy differences
      aside, and the trusted sources (TRUSTED: KernelBench's own harness) are read against
      issue 28's 97%. --other-policy-bench gives the same kernels under the other policy: a
      strict-only rule is a policy difference only where kernelbench does not say cheat too.
      --rulings replaces the automatic class of reviewed rows (their evidence kept); --judge
      names the kforge that gave the verdicts (its commit) in the report. A kernel
      that its source recorded several times (CUDA-L1 lists one file for up to five GPUs)
      counts once per record, as in CORPORA.md's totals.

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
import re
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


# The fixed taxonomy of issue 28 item 3: every disagreement is one of these, with its evidence.
CLASSES = {
    "harness": "source harness flaw: the recorded verdict measured something other than the "
               "kernel, or passed a kernel that is wrong on the problem's own inputs",
    "policy": "named policy difference: kforge's rule and KernelBench's harness differ on "
              "purpose (RULES.md)",
    "version": "problem version: the kernel was written for another version of the problem "
               "or its tolerance",
    "environment": "environment: an API or toolchain of the source's machine or of ours "
                   "(PyTorch 2.11, nvcc 13) decides, not the kernel",
    "kforge": "kforge error, or not yet explained: counts against kforge until a ruling with "
              "evidence (--rulings) says otherwise",
}
# Sources whose recorded verdicts come from KernelBench's own harness, on the problem version
# they name (docs/CORPORA.md): the ones the >= 97% target is read on. CUDA-L1's and METR's
# verdicts are implied by their releases (every file "correct"), not recorded per run.
TRUSTED = ("kb-fork-runs", "kb-leaderboard")
TARGET = 97.0
# Rules where kforge and KernelBench's harness differ on purpose, under both policies.
POLICY_RULES = {
    "H13": "reduced precision (TF32, autocast, half casts) on an fp32 problem: KernelBench's "
           "harness checks only the tolerance",
}
# Rules only --policy strict enforces: under kernelbench the same code is allowed.
STRICT_ONLY = {
    "H01": "PyTorch computing beside the kernel (allowed under --policy kernelbench)",
    "H04": "a vendor library called from the kernel sources (allowed under --policy kernelbench)",
    "H07": "a CUDA graph or other stream use (a graph the kernel sources launch is allowed "
           "under --policy kernelbench)",
}
PYTHON_GRAPH = ("torch.cuda.CUDAGraph", "torch.cuda.graph", "make_graphed_callables")
OWN_INPUTS = ("seed", "shape")  # trial labels drawn by the problem's own get_inputs()
TOL = re.compile(r"\(atol ([0-9.eE+-]+), rtol ([0-9.eE+-]+)\)")
SOURCE_TOL = 1e-2  # KernelBench v0 and v0.1's harness (atol = rtol = 1e-2), every source here


def trials_of(verdict):
    """The correctness stage's trial records (VERDICT.md), [] for verdicts without them."""
    for st in verdict.get("stages", []):
        if st.get("name") == "correctness":
            return st.get("trials") or []
    return []


def first_error(diags):
    d = next((d for d in diags if d.get("severity") == "error"), None)
    return "%s: %s" % (d.get("code"), d.get("message", "")) if d else ""


def wrong_output(verdict, text):
    """(class, detail, evidence) of an incorrect verdict from its failing trials."""
    failed = [t for t in trials_of(verdict) if t.get("pass") is False]
    if not failed:
        return "kforge", "wrong output", "no trial records; first error: " + text[:200]

    def fact(t):
        if "max_abs_err" in t:
            return "%s: max abs err %.3g, max rel err %.3g" % (
                t["label"], t["max_abs_err"], t.get("max_rel_err", float("nan")))
        return "%s: %s" % (t["label"], t.get("message", "wrong shape or dtype"))
    tol = TOL.search(text)
    atol = float(tol.group(1)) if tol else None
    own = [t for t in failed if t.get("label", "").startswith(OWN_INPUTS)]
    facts = "; ".join(fact(t) for t in failed[:3])
    if (atol is not None and atol < SOURCE_TOL and
            all(t.get("max_abs_err", 1e9) <= SOURCE_TOL for t in failed)):
        return "version", "tolerance", "every failing trial within %g, KernelBench v0's " \
            "tolerance; this run's atol %g: %s" % (SOURCE_TOL, atol, facts)
    if own:
        return "harness", "wrong output", "wrong on the problem's own inputs (the source's " \
            "check passed it): %s%s" % (facts, "" if tol is None else " " + tol.group(0))
    return "kforge", "wrong only on kforge's trials", "fails only on inputs kforge made " \
        "(%s), never on the problem's own draws: a ruling must show they are inside the " \
        "problem's contract (kforge lint-problems)" % facts


def classify(m, verdict, policy="kernelbench", other=None):
    """(class, detail, evidence) for a disagreement, class one of CLASSES. `other` is the same
    kernel's verdict under the other policy, when that run is given (strict's rules set apart)."""
    status = verdict["status"]
    diags = verdict.get("diagnostics", [])
    errors = [d for d in diags if d.get("severity") == "error"]
    codes = {d.get("code") for d in errors}
    text = " ".join(d.get("message", "") for d in errors)
    first = first_error(diags)
    pats = m.get("patterns", {})
    rec = m.get("recorded", {})
    if status == "cheat":
        rule = next((c for c in ("H02", "H01", "H03", "H13", "H07", "H06", "H16", "H20", "H08")
                     if c in codes), sorted(codes)[0] if codes else "?")
        stage = next((d.get("stage", "") for d in errors if d.get("code") == rule), "")
        evidence = "%s (stage %s)" % (first[:240], stage or "?")
        if rule in POLICY_RULES:
            return "policy", "cheat " + rule, POLICY_RULES[rule] + "; " + evidence
        if rule == "H16" and "ctypes" in text:
            return "policy", "cheat H16", "ctypes (raw memory access), which KernelBench's " \
                "harness allows and kforge does not, however it is used; " + evidence
        if rule == "H07" and any(g in text for g in PYTHON_GRAPH):
            return "policy", "cheat H07", "Python's CUDA graph APIs, which KernelBench's " \
                "harness accepts and kforge does not (RULES.md, CUDA graphs); " + evidence
        if policy == "strict" and codes <= set(STRICT_ONLY):
            if other is not None and other.get("status") == "cheat":
                # kernelbench calls it a cheat too, for a reason of its own: that reason, as
                # kernelbench's report classifies it, explains the disagreement under both.
                cls, detail, why = classify(m, other, "kernelbench")
                return cls, detail, "under kernelbench too: " + why + "; under strict: " + \
                    evidence
            return "policy", "cheat " + rule, "strict's " + STRICT_ONLY[rule] + (
                "" if other is None else "; under kernelbench: " + other.get("status", "?")) + \
                "; " + evidence
        return "harness", "cheat " + rule, "a rule kforge enforces and the source's harness " \
            "does not: " + evidence
    if status == "compile_error":
        guarded = pats.get("try_guarded_build") or "H03_guard" in {d.get("code") for d in diags}
        for needle, why in BROKEN_EVERYWHERE:
            if needle in text:
                if guarded:
                    return "harness", "fallback", why + "; its try/except ran PyTorch " \
                        "instead, which is what the source timed: " + first[:200]
                return "harness", "does not build", why + " (the source's verdict is not " \
                    "of this file as written): " + first[:200]
        for needle, why in OLD_TORCH:
            if needle in text:
                return "environment", "older PyTorch", why + ": " + first[:200]
        if guarded:
            return "kforge", "fallback?", "the build fails here and a try/except runs " \
                "PyTorch instead; whether it built where the source ran is not known: " + \
                first[:200]
        return "kforge", "compile_error", "a compiler error no rule explains: " + first[:200]
    if status == "format_error" and "no_kernel" in codes:
        return "policy", "no kernel", "plain PyTorch, no load_inline call: KernelBench counts " \
            "the model itself as an answer, kforge asks for a kernel"
    if status == "runtime_error" and "positional argument" in text:
        return "version", "problem version", "forward takes other arguments than the " \
            "problem's get_inputs() gives: written for another version of the problem: " + \
            first[:200]
    if rec.get("compiled") is False and status in ("ok", "incorrect", "runtime_error"):
        # Before the output's class and a fault's: a kernel the source never ran has no check
        # of its that passed it, nor a run without the fault (2026-12-07: kb-fork-runs'
        # 24_EfficientNetB2 sample 1 was called "wrong where the source's check passed it",
        # 34_InstanceNorm sample 0 "faults here and did not where the source ran").
        why = rec.get("compilation_error") or rec.get("other_error") or ""
        return "environment", "builds here", "the source's build failed; kforge's (PyTorch " \
            "2.11, nvcc 13) did not" + (": " + why[:160] if why else "") + \
            ("" if status == "ok" else "; here it runs and is %s: %s" % (status, first[:160]))
    if status == "runtime_error" and any(k in text for k in (
            "illegal memory access", "EXECUTION_FAILED", "unspecified launch failure",
            "misaligned address", "CUDA error")):
        return "kforge", "crash", "the kernel faults here and did not where the source ran " \
            "(an out-of-bounds access one GPU tolerates, or a fault of ours): a ruling needs " \
            "compute-sanitizer's report: " + first[:200]
    if status == "incorrect" and any(c in codes for c in ("mismatch", "wrong_output", "nan")):
        return wrong_output(verdict, text)
    if status == "ok":
        why = (rec.get("correctness_issue") or rec.get("runtime_error") or
               rec.get("other_error") or "")
        return "kforge", "accepted here", "the source recorded it failing and kforge says ok " \
            "(a kforge error unless a ruling shows the source's machine failed)" + (
                ": " + why[:160] if why else "")
    return "kforge", status, "unexplained: " + first[:200]


def read_rulings(path):
    """{(source, path): (class, evidence)} from a reviewed JSON-lines file, each line
    {"source", "path", "class", "evidence"}: a reviewer's decision with its evidence."""
    out = {}
    if not path:
        return out
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("class") not in CLASSES or not r.get("evidence"):
                sys.exit("%s:%d: a ruling needs a class (%s) and its evidence" % (
                    path, n, ", ".join(CLASSES)))
            out[(r["source"], os.path.normpath(r["path"]))] = (r["class"], r["evidence"])
    return out


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


def bench_records(benches, map_path):
    """{source: {sample path below samples/<source>/: bench record}} from bench folders."""
    out = collections.defaultdict(dict)
    merged = {}
    if map_path:
        with open(map_path) as f:
            merged = {r["merged"]: r for r in map(json.loads, f) if r}
    for bench in benches:
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


def by_content(keyed, records):
    """{content key: record} from one source's (manifest row, content key) pairs and its bench
    records: a verdict is the kernel's on its problem, so every record of the same file
    shares it."""
    out = {}
    for m, key in keyed:
        v = records.get(os.path.normpath(m["path"]))
        if v is not None:
            out[key] = v
    return out


def pct(a, n):
    return 100.0 * a / n if n else float("nan")


def compare(args):
    rows, left_out = [], collections.Counter()
    records = bench_records(args.bench, args.map)
    others = bench_records(args.other_policy_bench, args.map) if args.other_policy_bench else None
    rulings = read_rulings(args.rulings)
    policies = collections.Counter()
    for source in VERSIONS:
        if not os.path.exists(os.path.join(args.corpus, "samples", source, "manifest.jsonl")):
            continue  # a corpus built without this source
        keyed = [(m, content_key(args.corpus, source, m))
                     for m in manifest(args.corpus, source)]
        by_key = by_content(keyed, records[source])
        other_by_key = by_content(keyed, others[source]) if others is not None else {}
        for m, key in keyed:
            v = by_key.get(key)
            if v is None:
                continue
            verdict = v["verdict"]
            want = recorded(m["recorded"])
            status = verdict["status"]
            if m["recorded"].get("environment_failure") or status == "infra_error":
                left_out["their machine" if m["recorded"].get("environment_failure")
                         else "infra_error"] += 1
                continue
            policy = verdict.get("policy", "kernelbench")
            policies[policy] += 1
            diags = verdict.get("diagnostics", [])
            agrees = status in AGREES[want]
            cls = detail = evidence = ""
            if not agrees:
                other = other_by_key.get(key)
                cls, detail, evidence = classify(m, verdict, policy,
                                                 other["verdict"] if other else None)
                ruled = rulings.get((source, os.path.normpath(m["path"])))
                if ruled:
                    cls, evidence = ruled[0], "ruling: " + ruled[1]
            rows.append({"source": source, "level": m["level"], "problem": m["problem"],
                         "sample": m["sample"], "path": m["path"], "recorded": want,
                         "status": status, "agrees": agrees, "class": cls,
                         "category": detail, "evidence": evidence,
                         "reason": first_error(diags)})
    report(args, rows, left_out, policies)


def report(args, rows, left_out, policies):
    agree = sum(r["agrees"] for r in rows)
    out = ["# kforge vs recorded verdicts", ""]
    if args.judge:  # which kforge gave the verdicts (a pinned judge: scripts/pin-judge.sh)
        out += ["Judge: %s" % args.judge, ""]
    out += ["Policy: %s. %d of %d samples agree (%.1f%%); left out: %s" % (
               ", ".join("%s (%d)" % kv for kv in sorted(policies.items())) or "none",
               agree, len(rows), pct(agree, len(rows)), dict(left_out)), "",
           "## Per source", "",
           "Agreement, then agreement with named policy differences set aside (those samples "
           "out of the count), then the disagreements by class (%s)." % ", ".join(CLASSES), "",
           "| source | samples | agree | % | % without policy | " +
           " | ".join(CLASSES) + " |", "|---|---:|---:|---:|---:|" + "---:|" * len(CLASSES)]

    def line(name, rs):
        a = sum(r["agrees"] for r in rs)
        by = collections.Counter(r["class"] for r in rs if not r["agrees"])
        kept = len(rs) - by["policy"]
        return "| %s | %d | %d | %.1f | %.1f | %s |" % (
            name, len(rs), a, pct(a, len(rs)), pct(a, kept),
            " | ".join(str(by[c]) for c in CLASSES)), pct(a, kept)
    for source in VERSIONS:
        rs = [r for r in rows if r["source"] == source]
        if rs:
            out.append(line(source, rs)[0])
    trusted = [r for r in rows if r["source"] in TRUSTED]
    text, rate = line("**trusted** (%s)" % " + ".join(TRUSTED), trusted)
    out.append(text)
    kforge = [r for r in rows if r["class"] == "kforge"]
    out += ["", "Target (issue 28 item 3): on the trusted sources, >= %.0f%% once named policy "
            "differences are set aside: **%.1f%%, %s**. kforge errors or unexplained: **%d**." % (
                TARGET, rate, "met" if trusted and rate >= TARGET else "not met", len(kforge)),
            "", "## By level", "", "| source | level | samples | agree | % |",
            "|---|---|---:|---:|---:|"]
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["source"], r["level"])].append(r)
    for (source, level), rs in sorted(groups.items()):
        a = sum(r["agrees"] for r in rs)
        out.append("| %s | %s | %d | %d | %.1f |" % (source, level, len(rs), a, pct(a, len(rs))))
    confusion = collections.Counter((r["recorded"], r["status"]) for r in rows)
    out += ["", "| recorded | kforge | samples |", "|---|---|---:|"]
    out += ["| %s | %s | %d |" % (k[0], k[1], n) for k, n in sorted(confusion.items())]
    out += ["", "## Classes", ""] + ["- **%s**: %s" % kv for kv in CLASSES.items()]
    by = collections.Counter((r["class"], r["category"]) for r in rows if not r["agrees"])
    out += ["", "| class | detail | samples |", "|---|---|---:|"]
    out += ["| %s | %s | %d |" % (c, d, n) for (c, d), n in sorted(by.items())]
    out += ["", "## Disagreements, with their evidence", "",
            "| class | detail | source | problem | sample | recorded | kforge | evidence |",
            "|---|---|---|---|---|---|---|---|"]
    order = list(CLASSES)
    for r in sorted((r for r in rows if not r["agrees"]),
                    key=lambda r: (order.index(r["class"]), r["category"], r["source"],
                                   r["level"], r["problem"], str(r["sample"]))):
        out.append("| %s | %s | %s | %s/%s | %s | %s | %s | %s |" % (
            r["class"], r["category"], r["source"], r["level"], r["problem"], r["sample"],
            r["recorded"], r["status"], r["evidence"][:300].replace("|", "\\|")))
    emit(args.out, rows, out)


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
    c.add_argument("--other-policy-bench", action="append", default=[],
                   help="the same kernels benched under the other policy (with --map, the "
                        "same merge): a strict disagreement that kernelbench accepts is a "
                        "named policy difference")
    c.add_argument("--rulings", help="reviewed rulings, JSON lines {source, path, class, "
                                     "evidence}: they replace the automatic class")
    c.add_argument("--judge", default="",
                   help="the kforge that gave the verdicts (its commit), named in the report")
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
