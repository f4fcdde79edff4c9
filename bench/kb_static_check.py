#!/usr/bin/env python3
"""KernelBench's static checker run over kforge's red team, KernelBench's own adversarial
kernels, kforge's honest examples and the public corpora, next to what kforge answers
(docs/KERNELBENCH_DEFENCES.md).

  bench/kb_static_check.py --kernelbench DIR [--corpus .corpus] [--limit N] [--kforge PATH]
                           [--out out/kb_static_check]

DIR is a checkout of ScalingIntelligence/KernelBench; its checker
(src/kernelbench/kernel_static_checker.py) is loaded from there at run time, never copied here,
and so are its adversarial kernels (src/kernelbench/unit_tests/test_kernels/). Each file is
checked the way KernelBench's scripts do when `check_kernel` is on:
validate_kernel_static(code, backend, precision="fp32") with the default presets, where an
error rejects the sample and a warning is only printed. The backend is "cuda" for CUDA
candidates, "triton" for Triton ones and none for kforge's CPU candidates (KernelBench has no
CPU backend, and its "cuda" check would reject every C++-only file for lacking __global__).
Each check is also called alone to name which one fired, with the first source line that
fires it by itself (none for the backend checks, which flag an absence); for a try or a pass,
whether the Python really has that statement (ast) or only the word.

kforge's side: for the red team and the examples, the verdict each file's header says kforge
must give (tests/redteam/README.md); with --kforge, also what `kforge check` (the static
stages only) says under both policies, for every file. Writes OUT.jsonl (one line per file,
after a first line naming the checker) and OUT.md (the tables). --limit N takes the first N
samples of each corpus source. Standard library and subprocess only.
"""
import argparse
import ast
import collections
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_agreement  # noqa: E402  (manifest reading and recorded verdicts)

HEADER = re.compile(
    r"^# kforge-(problem|expect|rule|expect-kernelbench|rule-kernelbench): *(\S[^\n]*?) *$", re.M)
REDTEAM = (("cuda", "cuda"), ("cpu", None), ("triton", "triton"))  # folder, checker backend
EXAMPLES = (("cuda", "cuda"), ("cpu", None), ("triton", "triton"))
# kforge's rule family for the trick each of the checker's checks looks for (our reading of
# its comments; a file without a kernel computes elsewhere, in a library or beside a decoy). A
# red-team file's trick is the first id of its strict rule header (the family it belongs to);
# a flag from a check of another family caught the file by some other syntax.
FAMILY = {"code_bypass:try": {"H03"}, "code_bypass:pass": set(), "pytorch_wrap": {"H01"},
          "torch_computation_ops": {"H01"}, "timing_event_patch": {"H08"},
          "stream_injection": {"H07"}, "thread_injection": {"H07"}, "lazy_eval": {"H14"},
          "precision_downgrade": {"H13"}, "cuda_impl": {"H02", "H04"},
          "triton_impl": {"H02", "H04"}}


def load_checker(kernelbench):
    path = os.path.join(kernelbench, "src", "kernelbench", "kernel_static_checker.py")
    if not os.path.exists(path):
        found = [os.path.join(d, "kernel_static_checker.py") for d, _, fs in os.walk(kernelbench)
                 if "kernel_static_checker.py" in fs]
        if not found:
            sys.exit("no kernel_static_checker.py under %s" % kernelbench)
        path = found[0]
    spec = importlib.util.spec_from_file_location("kb_kernel_static_checker", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    git = subprocess.run(["git", "-C", kernelbench, "rev-parse", "HEAD"], capture_output=True,
                         text=True)
    commit = git.stdout.strip()[:12] if git.returncode == 0 else "unknown"
    return module, {"path": path, "sha256": digest, "commit": commit}


class Checker:
    """KernelBench's checker with its default presets, answering with check names."""

    def __init__(self, module):
        self.m = module

    def run(self, code, backend):
        m = self.m
        valid, errors, warnings = m.validate_kernel_static(code, backend=backend or "none",
                                                           precision="fp32")
        forbidden = list(m.STRICT_CHECKS)
        if backend in m.BACKEND_IMPL_CHECK:
            forbidden.append(m.BACKEND_IMPL_CHECK[backend])
        named = {"errors": [], "warnings": []}
        for name in sorted(set(forbidden + list(m.WARNING_CHECKS))):
            hit, msg = self.call(name, code)
            if hit:
                label = self.label(name, msg)
                entry = {"check": label, "message": msg, "line": self.first_line(name, label, code)}
                if name == "code_bypass":
                    entry["statement"] = has_statement(code, label)
                named["errors" if name in forbidden else "warnings"].append(entry)
        if len(named["errors"]) != len(errors) or len(named["warnings"]) != len(warnings):
            print("warning: the checks called one by one disagree with validate_kernel_static",
                  file=sys.stderr)
        return {"valid": valid, "errors": named["errors"], "warnings": named["warnings"]}

    def call(self, name, code):
        fn = self.m.CHECK_FUNCTIONS[name]
        if name in self.m.PRECISION_DEPENDENT_CHECKS:
            return fn(code, "fp32")
        return fn(code)

    @staticmethod
    def label(name, msg):
        if name == "code_bypass":  # one check, two tricks: a try/except or a `pass`
            return name + (":try" if "try" in msg else ":pass")
        return name

    def first_line(self, name, label, code):
        if name in self.m.BACKEND_IMPL_CHECK.values():
            return None  # flags what is missing, not a line
        for i, line in enumerate(code.split("\n"), 1):
            hit, msg = self.call(name, line)
            if hit and self.label(name, msg) == label:
                return {"line": i, "text": line.strip()[:160]}
        return None


def has_statement(code, label):
    """Whether the Python has the statement a code_bypass flag names (a try, or a pass), or
    only the word in a string, a docstring or kernel source; None when it does not parse."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    kinds = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
    if label.endswith(":pass"):
        kinds = (ast.Pass,)
    return any(isinstance(n, kinds) for n in ast.walk(tree))


def headers(path):
    with open(path, errors="replace") as f:
        return dict(HEADER.findall(f.read(2000)))


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def kforge_static(kforge, paths):
    """`kforge check --json` under both policies: {path: {policy: (outcome, [error codes])}}."""
    result = collections.defaultdict(dict)
    for policy in ("strict", "kernelbench"):
        for start in range(0, len(paths), 200):
            chunk = paths[start:start + 200]
            out = subprocess.run([kforge, "check", "--json", "--policy", policy] + chunk,
                                 capture_output=True, text=True)
            if out.returncode not in (0, 1):
                sys.exit("kforge check failed: %s" % out.stderr[-2000:])
            for path, line in zip(chunk, out.stdout.splitlines()):
                r = json.loads(line)
                codes = sorted({d["code"] for d in r["diagnostics"] if d["severity"] == "error"})
                result[path][policy] = {"outcome": r["outcome"], "rules": codes}
    return result


def checks(r, kind):
    return [e["check"] for e in r["kb"][kind]]


def for_its_trick(r):
    trick = (r.get("rule") or r["file"][:3].upper()).split()[0]
    return any(trick in FAMILY.get(c, set()) for c in checks(r, "errors"))


def collect(args, checker):
    rows = []
    for folder, backend in REDTEAM:
        base = os.path.join(ROOT, "tests", "redteam", folder)
        for name in sorted(os.listdir(base)):
            if not name.endswith(".py"):
                continue
            path = os.path.join(base, name)
            h = headers(path)
            rows.append({"set": "redteam", "group": folder, "file": name, "path": path,
                         "backend": backend, "problem": h.get("problem"),
                         "expect": h.get("expect"), "rule": h.get("rule"),
                         "expect_kernelbench": h.get("expect-kernelbench", h.get("expect")),
                         "rule_kernelbench": h.get("rule-kernelbench", h.get("rule")),
                         "kb": checker.run(read(path), backend)})
    for folder, backend in EXAMPLES:
        base = os.path.join(ROOT, "examples", folder)
        for name in sorted(os.listdir(base)):
            path = os.path.join(base, name)
            h = headers(path) if name.endswith(".py") else {}
            if h.get("expect") != "ok":
                continue
            rows.append({"set": "examples", "group": folder, "file": name, "path": path,
                         "backend": backend, "problem": h.get("problem"),
                         "expect": "ok", "kb": checker.run(read(path), backend)})
    # KernelBench's own adversarial kernels, read from the checkout.
    tk = os.path.join(os.path.dirname(checker.m.__file__), "unit_tests", "test_kernels")
    for name in sorted(os.listdir(tk)) if os.path.isdir(tk) else []:
        if name.endswith(".py"):
            path = os.path.join(tk, name)
            rows.append({"set": "kernelbench", "group": "test_kernels", "file": name,
                         "path": path, "backend": "cuda", "kb": checker.run(read(path), "cuda")})
    samples = os.path.join(args.corpus, "samples")
    for source in sorted(os.listdir(samples)) if os.path.isdir(samples) else []:
        if not os.path.exists(os.path.join(samples, source, "manifest.jsonl")):
            continue
        for m in corpus_agreement.manifest(args.corpus, source)[:args.limit]:
            path = os.path.join(samples, source, m["path"])
            code = read(path)
            rows.append({"set": "corpus", "group": source, "file": m["path"], "path": path,
                         "backend": "cuda", "problem": m["level"] + "/" + m["problem"],
                         "recorded": corpus_agreement.recorded(m["recorded"]),
                         "sha256": hashlib.sha256(code.encode()).hexdigest(),
                         "kb": checker.run(code, "cuda")})
    if args.kforge:
        static = kforge_static(args.kforge, [r["path"] for r in rows])
        for r in rows:
            r["kforge_static"] = static[r["path"]]
    return rows


def cell(names):
    return ", ".join(names) if names else "-"


def static_cell(r, policy):
    s = r.get("kforge_static", {}).get(policy)
    if not s:
        return ""
    return s["outcome"] + (" " + " ".join(s["rules"]) if s["rules"] else "")


def verdict(expect, rule):
    return expect + (" " + rule if rule and expect == "cheat" else "")


def words_only(r):
    """Rejected only by code_bypass, on a word the Python does not use as a statement."""
    errors = r["kb"]["errors"]
    return bool(errors) and all(e.get("statement") is False for e in errors)


def md(text):
    return text.replace("|", "\\|").replace("`", "'")


def kb_cell(r):
    parts = []
    if checks(r, "errors"):
        parts.append("rejects: " + cell(checks(r, "errors")) +
                     ("" if for_its_trick(r) else " (not its trick)"))
    if checks(r, "warnings"):
        parts.append("warns: " + cell(checks(r, "warnings")))
    return "; ".join(parts) or "silent"


def decided_by(r):
    """Where kforge's answer comes from: a static finding naming the file's rule, or a run."""
    s = r.get("kforge_static", {}).get("strict")
    if s is None:
        return ""
    rules = set((r.get("rule") or "").split())
    return "static" if s["outcome"] == "cheat" and rules & set(s["rules"]) else "run time"


def per_folder(rs, fn):
    """One value when the folders agree, else each folder's."""
    values = [(r["group"], fn(r)) for r in rs]
    if len({v for _, v in values}) == 1:
        return values[0][1]
    return "; ".join("%s: %s" % gv for gv in values)


def report_redteam(rows, have_static):
    out = ["## Red team", "",
           "One row per file name (a CPU file and its CUDA twin share a row). kforge: the verdict "
           "the header says kforge must give, strict / kernelbench policy." +
           (" By: whether `kforge check` (static stages only, strict) already names the rule, or "
            "the verdict needs a run." if have_static else "") +
           " KB: the checker's errors (rejects) and warnings; \"not its trick\": no rejecting "
           "check looks for the file's family (the first rule id).", ""]
    head = "| case | folders | kforge | " + ("by | " if have_static else "") + "KB checker |"
    out += [head, "|" + "---|" * (head.count("|") - 1)]
    by_name = collections.OrderedDict()
    for r in sorted((r for r in rows if r["set"] == "redteam"), key=lambda r: r["file"]):
        by_name.setdefault(r["file"], []).append(r)
    for name, rs in by_name.items():
        rs.sort(key=lambda r: [f for f, _ in REDTEAM].index(r["group"]))
        kf = per_folder(rs, lambda r: verdict(r["expect"], r["rule"]) + " / " +
                        verdict(r["expect_kernelbench"], r["rule_kernelbench"]))
        line = "| `%s` | %s | %s | " % (name[:-3], ", ".join(r["group"] for r in rs), kf)
        if have_static:
            line += per_folder(rs, decided_by) + " | "
        out.append(line + per_folder(rs, kb_cell) + " |")
    out += ["", "| folder | cases | KB rejects | for its trick | KB only warns | KB silent |",
            "|---|---:|---:|---:|---:|---:|"]
    for folder, _ in REDTEAM:
        rs = [r for r in rows if r["set"] == "redteam" and r["group"] == folder]
        rejected = [r for r in rs if not r["kb"]["valid"]]
        out.append("| %s | %d | %d | %d | %d | %d |" % (
            folder, len(rs), len(rejected), sum(for_its_trick(r) for r in rejected),
            sum(1 for r in rs if r["kb"]["valid"] and r["kb"]["warnings"]),
            sum(1 for r in rs if r["kb"]["valid"] and not r["kb"]["warnings"])))
    return out


def report_others(rows, have_static):
    out = ["", "## KernelBench's own adversarial kernels (`unit_tests/test_kernels/`)", "",
           "| file | KB rejects | KB warns |" + (" kforge check |" if have_static else ""),
           "|---|---|---|" + ("---|" if have_static else "")]
    for r in [r for r in rows if r["set"] == "kernelbench"]:
        out.append("| `%s` | %s | %s |" % (r["file"], cell(checks(r, "errors")),
                                          cell(checks(r, "warnings"))) +
                   (" %s / %s |" % (static_cell(r, "strict"), static_cell(r, "kernelbench"))
                    if have_static else ""))
    out += ["", "## kforge's honest examples (header `ok`)", "",
            "| folder | file | KB rejects | KB warns | first line that fires |",
            "|---|---|---|---|---|"]
    for r in [r for r in rows if r["set"] == "examples"]:
        first = next((e for e in r["kb"]["errors"] + r["kb"]["warnings"] if e["line"]), None)
        out.append("| %s | `%s` | %s | %s | %s |" % (
            r["group"], r["file"], cell(checks(r, "errors")), cell(checks(r, "warnings")),
            "%d: `%s`" % (first["line"]["line"], md(first["line"]["text"])) if first else "-"))
    return out


def report_corpus(rows, have_static):
    corpus = [r for r in rows if r["set"] == "corpus"]
    out = ["", "## Corpora (`.corpus/samples`, docs/CORPORA.md)", "",
           "Samples as the manifests count them (CUDA-L1 lists one file for several GPUs). "
           "Recorded correct: the source recorded the sample correct. Words only: rejected only "
           "for a `try`/`except` or `pass` that the Python does not use as a statement (a "
           "docstring, a string, kernel source).", ""]
    head = ("| source | samples | distinct files | KB rejects | recorded correct | words only | "
            "KB only warns | KB silent |")
    if have_static:
        head += (" kforge check cheat (strict) | (kernelbench) | KB rejects, kforge check "
                 "passes (kernelbench) |")
    out += [head, "|---|" + "---:|" * (head.count("|") - 2)]
    sources = sorted({r["group"] for r in corpus})
    for source in sources:
        rs = [r for r in corpus if r["group"] == source]
        rejected = [r for r in rs if not r["kb"]["valid"]]
        line = "| %s | %d | %d | %d | %d | %d | %d | %d |" % (
            source, len(rs), len({r["sha256"] for r in rs}), len(rejected),
            sum(1 for r in rejected if r["recorded"] == "correct"),
            sum(1 for r in rejected if words_only(r)),
            sum(1 for r in rs if r["kb"]["valid"] and r["kb"]["warnings"]),
            sum(1 for r in rs if r["kb"]["valid"] and not r["kb"]["warnings"]))
        if have_static:
            line += " %d | %d | %d |" % (
                sum(1 for r in rs if r["kforge_static"]["strict"]["outcome"] == "cheat"),
                sum(1 for r in rs if r["kforge_static"]["kernelbench"]["outcome"] == "cheat"),
                sum(1 for r in rejected if r["kforge_static"]["kernelbench"]["outcome"] == "pass"))
        out.append(line)
    out += ["", "Samples each check flags (a sample may be flagged by several):", "",
            "| source | kind | checks |", "|---|---|---|"]
    for source in sources:
        rs = [r for r in corpus if r["group"] == source]
        for kind in ("errors", "warnings"):
            c = collections.Counter(x for r in rs for x in checks(r, kind))
            counts = ", ".join("%s %d" % kv for kv in c.most_common()) or "-"
            out.append("| %s | %s | %s |" % (source, "rejects" if kind == "errors" else "warns",
                                             counts))
    out += ["", "What fires the rejecting checks over all sources (the first line that fires "
            "each check alone; the statement column: the Python has a try / a pass statement):",
            "", "| check | samples | statement in the Python | most common lines |",
            "|---|---:|---|---|"]
    by_check = collections.defaultdict(list)
    for r in corpus:
        for e in r["kb"]["errors"]:
            by_check[e["check"]].append(e)
    for check, es in sorted(by_check.items(), key=lambda kv: -len(kv[1])):
        lines = collections.Counter(e["line"]["text"] for e in es if e["line"])
        st = collections.Counter({True: "yes", False: "no", None: "does not parse"}[e["statement"]]
                                 for e in es if "statement" in e)
        out.append("| %s | %d | %s | %s |" % (
            check, len(es), ", ".join("%s %d" % kv for kv in st.most_common()) or "-",
            "; ".join("`%s` %d" % (md(t[:80]), n) for t, n in lines.most_common(4)) or "-"))
    return out


def report(rows, info, args):
    have_static = bool(args.kforge)
    out = ["# KernelBench's static checker on kforge's red team, examples and the corpora", "",
           "Checker `%s` (sha256 %s, KernelBench commit %s), run as KernelBench's scripts run it "
           "with `check_kernel` on: precision fp32, default presets; an error rejects the sample, "
           "a warning is only printed. Regenerate: `python3 bench/kb_static_check.py "
           "--kernelbench DIR%s`." % (os.path.relpath(info["path"], args.kernelbench),
                                      info["sha256"][:12], info["commit"],
                                      " --kforge build/kforge" if have_static else ""), ""]
    return (out + report_redteam(rows, have_static) + report_others(rows, have_static) +
            report_corpus(rows, have_static))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernelbench", required=True, help="a KernelBench checkout")
    ap.add_argument("--corpus", default=os.path.join(ROOT, ".corpus"),
                    help="the .corpus folder scripts/corpus.py wrote (its samples/ is read)")
    ap.add_argument("--limit", type=int, help="the first N samples of each corpus source")
    ap.add_argument("--kforge", help="a kforge binary: add `kforge check` under both policies")
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "kb_static_check"),
                    help="writes OUT.jsonl and OUT.md")
    args = ap.parse_args()
    module, info = load_checker(os.path.abspath(args.kernelbench))
    rows = collect(args, Checker(module))
    checkout = os.path.abspath(args.kernelbench)
    for r in rows:  # paths as a reader finds them: in this repository, the checkout, a source
        base = {"corpus": None, "kernelbench": checkout}.get(r["set"], ROOT)
        r["path"] = os.path.relpath(r["path"], base) if base else r["file"]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)) or ".", exist_ok=True)
    with open(args.out + ".jsonl", "w") as f:
        f.write(json.dumps({"checker": info}) + "\n")
        for r in rows:
            f.write(json.dumps(r) + "\n")
    text = "\n".join(report(rows, info, args)) + "\n"
    with open(args.out + ".md", "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
