#!/usr/bin/env python3
"""Rebuild .corpus/: KernelBench problem versions and public model-written samples with verdicts.

Everything comes out of local bare git mirrors (one per GitHub repository, at
<mirror>/<owner>+<name>/repo). Nothing here is committed: .corpus/ is ignored. See
docs/CORPORA.md for what each source is and which problem version its verdicts belong to.

    python3 scripts/corpus.py [--mirror /work/.mirror] [--out .corpus]

Layout written:
    <out>/KernelBench/level1..4             KernelBench main (the current problems)
    <out>/KernelBench-<short>/level1..4     older KernelBench versions (v0, v0.1)
    <out>/KernelBench-METR/level1..3,5      METR's filtered task set
    <out>/KernelBench-leaderboard/level1..3 the leaderboard's copies (v0 but two older files)
    <out>/samples/<source>/<level>/<problem stem>/sample_<i>.py
    <out>/samples/<source>/manifest.jsonl   one line per sample, with the recorded verdict
    <out>/samples/<source>/patterns.json    counts of source patterns the verifier must handle
    <out>/summary.json                      counts per source, level and recorded verdict

Python 3 standard library only.
"""
import argparse
import ast
import collections
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

# Pinned commits: the state this corpus was built from.
KERNELBENCH = "ScalingIntelligence/KernelBench"
KB_MAIN = "423217d9fda91e0c2d67e4a43bf62f96f6d104f1"  # main, 2026-03-05
KB_V0 = "6500bbc8cf102520d7a8f09be34ee6d5db1c29b0"  # branch v0 (original release sizes)
KB_V01 = "129232ea3c4cfa05c2dd5473bdb935d6246dc84b"  # branch v0.1 (scaled-up sizes)

CUDA_L1 = ("deepreinforce-ai/CUDA-L1", "51e8356bf844101cab2aeeca4bdff47ebb1953b8")
LEADERBOARD = ("anneouyang/KernelBenchLeaderboard", "170ca7965f53bba599d1078b6fcaa5dd2658ec50")
FORK_RUNS = ("technoabsurdist/KernelBench", "9202a5c5786ab959fcaa3b4ce0356348bb87c86a")
METR = ("pavanyellow/KernelBenchFiltered", "67a4e2bba2c861618119905e27938c770af8a462")
METR_ALIAS = "# Added by kforge scripts/corpus.py (the solution names its class Model).\nModelNew = Model\n"


# ---------------------------------------------------------------------------------------------
# git access


class Mirror:
    def __init__(self, root, repo):
        self.repo = repo
        self.git_dir = os.path.join(root, repo.replace("/", "+"), "repo")
        if not os.path.isdir(self.git_dir):
            sys.exit(f"missing mirror for {repo}: {self.git_dir}")

    def _git(self, *args):
        return subprocess.run(["git", "--git-dir=" + self.git_dir, *args],
                              check=True, capture_output=True).stdout

    def show(self, commit, path):
        return self._git("show", f"{commit}:{path}").decode("utf-8")

    def ls(self, commit, path):
        """Names of the entries directly under path (empty if path is absent)."""
        try:
            out = self._git("ls-tree", "--name-only", f"{commit}:{path}")
        except subprocess.CalledProcessError:
            return []
        return out.decode().split()

    def extract(self, commit, path, dest, rename=lambda rel: rel):
        """Write every file under path at commit to dest/<rename(path relative to path)>."""
        data = self._git("archive", "--format=tar", commit, path)
        count = 0
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for m in tar.getmembers():
                if not m.isfile():
                    continue
                rel = rename(os.path.relpath(m.name, path))
                if rel is None:
                    continue
                target = os.path.join(dest, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as f:
                    f.write(tar.extractfile(m).read())
                count += 1
        return count


def problem_stems(mirror, commit, folder):
    """{problem number: file stem} for a KernelBench-style folder ("19_ReLU.py" -> 19)."""
    out = {}
    for name in mirror.ls(commit, folder):
        m = re.match(r"(\d+)_.*\.py$", name)
        if m:
            out[int(m.group(1))] = name[:-3]
    return out


# ---------------------------------------------------------------------------------------------
# problems


def write_problems(args, kb, metr, board):
    versions = {}

    def kernelbench(commit, name, note):
        dest = os.path.join(args.out, name)
        shutil.rmtree(dest, ignore_errors=True)
        n = kb.extract(commit, "KernelBench", dest,
                       rename=lambda rel: rel if rel.startswith("level") else None)
        write_json(os.path.join(dest, "VERSION.json"),
                   {"repo": KERNELBENCH, "commit": commit, "note": note})
        counts = {lvl: len(problem_stems(kb, commit, f"KernelBench/{lvl}"))
                  for lvl in ("level1", "level2", "level3", "level4")}
        versions[name] = {"commit": commit, "files": n, "problems": counts, "note": note}

    kernelbench(KB_MAIN, "KernelBench", "main branch (current problem sizes)")
    kernelbench(KB_V0, "KernelBench-" + KB_V0[:7], "branch v0: original release sizes")
    kernelbench(KB_V01, "KernelBench-" + KB_V01[:7], "branch v0.1: scaled-up sizes")

    # The leaderboard's own copies (docs/assets/problems/l<L>_p<N>.py), under v0's file names:
    # they are v0 except level1/100 and level2/44, which predate KernelBench's edit of
    # 2025-01-10, and the leaderboard's kernels answer those older forms.
    name = "KernelBench-leaderboard"
    dest = os.path.join(args.out, name)
    shutil.rmtree(dest, ignore_errors=True)
    stems = {L: problem_stems(kb, KB_V0, f"KernelBench/level{L}") for L in (1, 2, 3)}

    def board_rename(rel):
        m = re.fullmatch(r"l(\d)_p(\d+)\.py", rel)
        stem = m and stems.get(int(m.group(1)), {}).get(int(m.group(2)))
        return "level%s/%s.py" % (m.group(1), stem) if stem else None

    n = board.extract(LEADERBOARD[1], "docs/assets/problems", dest, rename=board_rename)
    write_json(os.path.join(dest, "VERSION.json"),
               {"repo": LEADERBOARD[0], "commit": LEADERBOARD[1],
                "note": "the leaderboard's copies of the problems (v0 but level1/100, level2/44)"})
    versions[name] = {"commit": LEADERBOARD[1], "files": n}

    # METR's filtered tasks: tasks/level_<L>/ -> levelL/
    dest = os.path.join(args.out, "KernelBench-METR")
    shutil.rmtree(dest, ignore_errors=True)

    def metr_rename(rel):
        parts = rel.split("/")
        if len(parts) != 2 or not parts[1].endswith(".py"):
            return None
        return parts[0].replace("level_", "level") + "/" + parts[1]

    n = metr.extract(METR[1], "tasks", dest, rename=metr_rename)
    write_json(os.path.join(dest, "VERSION.json"),
               {"repo": METR[0], "commit": METR[1], "note": "METR's filtered KernelBench tasks"})
    versions["KernelBench-METR"] = {"commit": METR[1], "files": n}
    return versions


# ---------------------------------------------------------------------------------------------
# samples


class Source:
    """Collects one source's samples into <out>/samples/<name>/."""

    def __init__(self, args, name, repo, commit, problems):
        self.name, self.repo, self.commit, self.problems = name, repo, commit, problems
        self.root = os.path.join(args.out, "samples", name)
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)
        self.rows = []
        self.next_index = collections.Counter()
        self.skipped = collections.Counter()  # why candidates were left out

    def add(self, level, number, stem, code, recorded, origin_path, **extra):
        if not is_cuda_candidate(code):
            self.skipped[kind_of(code)] += 1
            return
        lvl = f"level{level}"
        i = self.next_index[(lvl, stem)]
        self.next_index[(lvl, stem)] += 1
        rel = f"{lvl}/{stem}/sample_{i}.py"
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(code if code.endswith("\n") else code + "\n")
        row = {"source": self.name, "level": lvl, "problem": stem, "problem_id": number,
               "sample": i, "path": rel, "recorded": recorded,
               "origin": f"{self.repo}@{self.commit}:{origin_path}"}
        row.update(extra)
        row["patterns"] = patterns(code)
        self.rows.append(row)

    def finish(self):
        with open(os.path.join(self.root, "manifest.jsonl"), "w") as f:
            for row in self.rows:
                f.write(json.dumps(row, sort_keys=False) + "\n")
        counts = collections.Counter()
        for row in self.rows:
            for p, on in row["patterns"].items():
                counts[p] += bool(on)
        write_json(os.path.join(self.root, "patterns.json"),
                   {"samples": len(self.rows), "files_with_pattern": dict(sorted(counts.items()))})
        by_level = collections.defaultdict(collections.Counter)
        for row in self.rows:
            r = row["recorded"]
            verdict = ("correct" if r.get("correct") else
                       "incorrect" if r.get("compiled") else "compile_failed")
            by_level[row["level"]][verdict] += 1
            by_level[row["level"]]["total"] += 1
        return {"repo": self.repo, "commit": self.commit, "problems": self.problems,
                "samples": len(self.rows),
                "by_level": {k: dict(v) for k, v in sorted(by_level.items())},
                "left_out": dict(self.skipped), "patterns": dict(sorted(counts.items()))}


def kind_of(code):
    if not code:
        return "empty"
    if "triton" in code and "@triton.jit" in code:
        return "triton"
    if "load_inline" not in code:
        return "pytorch_only" if "class ModelNew" in code else "other"
    return "no_ModelNew"


def is_cuda_candidate(code):
    defines_model_new = re.search(r"^(class ModelNew\b|ModelNew\s*=)", code or "", re.M)
    return bool(code) and "load_inline" in code and bool(defines_model_new) \
        and "@triton.jit" not in code


def as_float(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def cuda_l1(args, kb):
    """CUDA-L1's released kernels: one JSON object per line, per GPU; all recorded faster+correct."""
    m = Mirror(args.mirror, CUDA_L1[0])
    src = Source(args, "cuda-l1", CUDA_L1[0], CUDA_L1[1], "KernelBench-" + KB_V0[:7])
    stems = {L: problem_stems(kb, KB_V0, f"KernelBench/level{L}") for L in (1, 2, 3)}
    gpus = [("h100", "NVIDIA H100 (XSM)"), ("a100", "NVIDIA A100"), ("h20", "NVIDIA H20"),
            ("l40", "NVIDIA L40"), ("3090", "NVIDIA RTX 3090")]
    for key, hardware in gpus:
        path = f"optimized_cuda_code/{key}.json"
        for lineno, line in enumerate(m.show(CUDA_L1[1], path).splitlines(), 1):
            if not line.strip():
                continue
            x = json.loads(line)
            level, task = int(x["level_id"]), int(x["task_id"])
            code = x.get("custom_code")
            if not code or code == "None":
                src.skipped["no_code"] += 1
                continue
            recorded = {"compiled": True, "correct": True,
                        "speedup": as_float(x.get("score_default")),
                        "speedup_torch_compile": as_float(x.get("score_torch_compile_default")),
                        "speedup_torch_compile_reduce_overhead":
                            as_float(x.get("score_torch_compile_reduce_overhead")),
                        "speedup_cuda_graph": as_float(x.get("score_cuda_graph")),
                        "hardware": hardware,
                        "implied": "released optimized kernel: correct and faster as recorded"}
            src.add(level, task, stems[level][task], code, recorded, f"{path}#L{lineno}")
    return src.finish()


def leaderboard(args, kb):
    """KernelBench's Dec 2024 leaderboard: top correct kernels per problem on an L40S."""
    m = Mirror(args.mirror, LEADERBOARD[0])
    src = Source(args, "kb-leaderboard", LEADERBOARD[0], LEADERBOARD[1],
                 "KernelBench-leaderboard")
    stems = {L: problem_stems(kb, KB_V0, f"KernelBench/level{L}") for L in (1, 2, 3)}
    rows = json.loads(m.show(LEADERBOARD[1], "docs/assets/raw_data.json"))
    rows.sort(key=lambda x: (int(x["level"]), int(x["problem_id"]), x["model"], x["file"]))
    for x in rows:
        # problem_id here counts from 0 (data.json's names show it is the file number minus 1)
        level, pid = int(x["level"]), int(x["problem_id"]) + 1
        recorded = {"compiled": True, "correct": True,
                    "runtime_ms": as_float(x.get("kernel_eval_time")),
                    "speedup": as_float(x.get("torch_speedup")),
                    "speedup_torch_compile": as_float(x.get("torch_compile_speedup")),
                    "baseline_torch_ms": as_float(x.get("baseline_torch_time")),
                    "baseline_torch_compile_ms": as_float(x.get("baseline_torch_compile_time")),
                    "hardware": "NVIDIA L40S",
                    "implied": "leaderboard lists correct kernels only"}
        src.add(level, pid, stems[level][pid], x["code"], recorded,
                f"docs/assets/solutions/{x['file']}.py", model=x["model"])
    return src.finish()


def fork_runs(args, kb):
    """A KernelBench fork's committed runs (eval_results.json / detailed_results.json), A100."""
    m = Mirror(args.mirror, FORK_RUNS[0])
    c = FORK_RUNS[1]
    src = Source(args, "kb-fork-runs", FORK_RUNS[0], c, "KernelBench-" + KB_V01[:7])
    stems = {L: problem_stems(kb, KB_V01, f"KernelBench/level{L}") for L in (1, 2, 3)}

    def recorded_from(e, model, run):
        meta = e.get("metadata") or {}
        runtime = as_float(e.get("runtime"))
        r = {"compiled": bool(e.get("compiled")), "correct": bool(e.get("correctness")),
             "runtime_ms": runtime if runtime and runtime > 0 else None,
             "correctness_trials": meta.get("correctness_trials"),
             "hardware": meta.get("hardware"), "model": model, "run": run}
        for k in ("compilation_error", "runtime_error", "correctness_issue", "other_error"):
            if meta.get(k):
                r[k] = str(meta[k])[:300]
        # Failures of their machine rather than of the kernel (wrong arch build, a 40 GB card
        # too small for the v0.1 sizes): a verdict on our side cannot be expected to agree.
        text = "" if r["correct"] else " ".join(str(v) for v in meta.values())
        if "no kernel image is available" in text:
            r["environment_failure"] = "no_kernel_image"
        elif "out of memory" in text:
            r["environment_failure"] = "out_of_memory"
        return r

    for run in sorted(m.ls(c, "runs")):
        names = m.ls(c, f"runs/{run}")
        if "eval_results.json" in names:
            cfg = m.show(c, f"runs/{run}/generation_config.yaml")
            model = re.search(r"^model_name:\s*(.+)$", cfg, re.M).group(1).strip()
            level = int(re.search(r"^level:\s*(\d+)", cfg, re.M).group(1))
            results = json.loads(m.show(c, f"runs/{run}/eval_results.json"))
            for pid in sorted(results, key=int):
                entries = results[pid] if isinstance(results[pid], list) else [results[pid]]
                for e in entries:
                    s = e.get("sample_id", 0)
                    fname = f"level_{level}_problem_{pid}_sample_{s}_kernel.py"
                    if fname not in names:
                        src.skipped["verdict_without_kernel"] += 1
                        continue
                    path = f"runs/{run}/{fname}"
                    src.add(level, int(pid), stems[level][int(pid)], m.show(c, path),
                            recorded_from(e, model, run), path)
        elif "detailed_results.json" in names:
            d = json.loads(m.show(c, f"runs/{run}/detailed_results.json"))
            level, model = int(d["run_info"]["level"]), d["run_info"]["model"]
            for x in sorted(d["results"], key=lambda x: x["problem_id"]):
                e = x.get("eval_result")
                fname = f"problem_{x['problem_id']}_kernel.py"
                if not e or fname not in names:
                    src.skipped["no_verdict_or_kernel"] += 1
                    continue
                path = f"runs/{run}/{fname}"
                pid = int(x["problem_id"])
                src.add(level, pid, stems[level][pid], m.show(c, path),
                        recorded_from(e, model, run), path)
    return src.finish()


def metr(args):
    """METR's best KernelAgent solutions; speedup recorded in each file's first line (H100)."""
    m = Mirror(args.mirror, METR[0])
    src = Source(args, "metr", METR[0], METR[1], "KernelBench-METR")
    header = re.compile(r"#\s*level (\d+) index (\d+) agent name: (.*?) speedup: ([\d.]+)x")
    for L in (1, 2, 3):
        stems = problem_stems(m, METR[1], f"tasks/level_{L}")
        names = m.ls(METR[1], f"best_agent_solutions/level_{L}")
        for name in sorted(names, key=lambda n: int(re.sub(r"\D", "", n) or 0)):
            mm = re.match(r"task_(\d+)\.py$", name)
            if not mm:
                continue
            path = f"best_agent_solutions/level_{L}/{name}"
            code = m.show(METR[1], path)
            h = header.search(code.splitlines()[0] if code else "")
            pid = int(mm.group(1))
            recorded = {"compiled": True, "correct": True,
                        "speedup": float(h.group(4)) if h else None,
                        "hardware": "NVIDIA H100 (METR's report)",
                        "implied": "best agent solution per task: correct as recorded"}
            extra = {"model": h.group(3) if h else None}
            # METR's solutions replace the whole problem file and name their class Model; the
            # KernelBench candidate format wants ModelNew, so one alias line is appended.
            if "class ModelNew" not in code and re.search(r"^class Model\(", code, re.M):
                code = code.rstrip("\n") + "\n\n\n" + METR_ALIAS
                extra["adapted"] = "appended: ModelNew = Model"
            src.add(L, pid, stems[pid], code, recorded, path, **extra)
    return src.finish()


# ---------------------------------------------------------------------------------------------
# source patterns our verifier must handle


def patterns(code):
    """Counts of constructs in one candidate (static, by parsing the Python)."""
    p = {
        "cuda_fp16_include": "cuda_fp16.h" in code,
        "cuda_bf16_include": "cuda_bf16.h" in code,
        "pybind11_module_in_source": "PYBIND11_MODULE" in code,
        "links_cublas": "lcublas" in code or "cublas_v2.h" in code,
        "extern_c_kernel": 'extern "C"' in code,
        "import_triton": re.search(r"^\s*import triton|^\s*from triton", code, re.M) is not None,
        "syntax_error": False,
        "load_inline_calls": 0,
        "fstring_source": False,
        "fstring_in_load_inline_args": False,
        "try_guarded_build": False,
        "missing_cpp_sources": False,
        "empty_cpp_sources": False,
        "no_functions_arg": False,
        "build_inside_function": False,
        "build_directory_arg": False,
    }
    try:
        tree = ast.parse(code)
    except SyntaxError:
        p["syntax_error"] = True
        return p
    assigned = {}  # name -> value node of its (last) assignment anywhere
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    assigned[t.id] = node.value
        if isinstance(node, ast.JoinedStr) and any(
                isinstance(v, ast.Constant) and isinstance(v.value, str)
                and ("__global__" in v.value or "#include" in v.value) for v in node.values):
            p["fstring_source"] = True

    def is_fstring(v):
        if isinstance(v, ast.Name):
            v = assigned.get(v.id, v)
        if isinstance(v, (ast.List, ast.Tuple)):
            return any(is_fstring(e) for e in v.elts)
        if isinstance(v, ast.BinOp):
            return is_fstring(v.left) or is_fstring(v.right)
        return isinstance(v, ast.JoinedStr)

    def calls_load_inline(node):
        return any(isinstance(n, ast.Call) and call_name(n) == "load_inline"
                   for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(calls_load_inline(s) for s in node.body):
            p["try_guarded_build"] = True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and calls_load_inline(node):
            p["build_inside_function"] = True
        if not (isinstance(node, ast.Call) and call_name(node) == "load_inline"):
            continue
        p["load_inline_calls"] += 1
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        if any(is_fstring(v) for v in list(kw.values()) + list(node.args)):
            p["fstring_in_load_inline_args"] = True
        if "cpp_sources" not in kw and len(node.args) < 2:
            p["missing_cpp_sources"] = True
        cpp = kw.get("cpp_sources")
        if isinstance(cpp, ast.Name):
            cpp = assigned.get(cpp.id, cpp)
        if isinstance(cpp, ast.Constant) and not (cpp.value or "").strip():
            p["empty_cpp_sources"] = True
        if "functions" not in kw and len(node.args) < 4:
            p["no_functions_arg"] = True
        if "build_directory" in kw:
            p["build_directory_arg"] = True
    return p


def call_name(call):
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


# ---------------------------------------------------------------------------------------------


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", default="/work/.mirror",
                    help="folder of bare mirrors, <owner>+<name>/repo (default %(default)s)")
    ap.add_argument("--out", default=os.path.join(here, ".corpus"),
                    help="output folder (default: .corpus in the repository)")
    args = ap.parse_args()

    kb = Mirror(args.mirror, KERNELBENCH)
    summary = {"problems": write_problems(args, kb, Mirror(args.mirror, METR[0]),
                                          Mirror(args.mirror, LEADERBOARD[0])),
               "sources": {}}
    summary["sources"]["cuda-l1"] = cuda_l1(args, kb)
    summary["sources"]["kb-leaderboard"] = leaderboard(args, kb)
    summary["sources"]["kb-fork-runs"] = fork_runs(args, kb)
    summary["sources"]["metr"] = metr(args)
    write_json(os.path.join(args.out, "summary.json"), summary)
    for name, s in summary["sources"].items():
        print(f"{name}: {s['samples']} samples {json.dumps(s['by_level'])} "
              f"left out {json.dumps(s['left_out'])}")


if __name__ == "__main__":
    main()
