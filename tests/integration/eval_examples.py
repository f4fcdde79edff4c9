"""End-to-end check of `kforge eval` over the example candidates of one backend.

Every example file says which problem it solves and which status it must get:
    # kforge-problem: level1/relu.py
    # kforge-expect: ok
This runs the real binary on each, checks the verdict (status, and for each status the facts
a user relies on: times and speedups, compiler lines, crash text, mismatch details), then
evaluates one honest example again and checks that nothing was compiled the second time.
Prints one line per example and ends with "N passed, N failed".

With --policy kernelbench, an example may expect another status under KernelBench's policy
(PyTorch compute beside the candidate's kernels is allowed, and listed in the verdict, and so
is a CUDA graph the kernel sources launch):
    # kforge-expect-kernelbench: ok
    # kforge-rule-kernelbench: H01     (ok: these PyTorch ops must be listed as having run;
                                        H04 or H07_graph: named by their static note)
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# "rule" may list several ids: the trick belongs to the first family, and a rule of another
# listed family that catches it first is also a right answer.
HEADER = re.compile(
    r"^# kforge-(problem|expect|rule|expect-kernelbench|rule-kernelbench|says): *(\S[^\n]*?) *$",
    re.M)
POLICY = "strict"  # set from --policy in main()


def examples(folder):
    for root, _dirs, files in os.walk(folder):
        for f in sorted(files):
            if f.endswith((".py", ".md")) and not f.startswith("check_"):
                path = os.path.join(root, f)
                with open(path) as fh:
                    head = fh.read(2000)
                meta = dict(HEADER.findall(head))
                if "problem" in meta and "expect" in meta:
                    expect, rule = meta["expect"], meta.get("rule")
                    if POLICY == "kernelbench" and "expect-kernelbench" in meta:
                        expect = meta["expect-kernelbench"]
                        rule = meta.get("rule-kernelbench", rule)
                    yield path, meta["problem"], expect, rule


# More `kforge eval` flags for every evaluation, e.g. KFORGE_EVAL_FLAGS=--plain-headers to check
# that the examples and the red team end the same with it (tests/redteam/run.sh passes it on).
EXTRA_FLAGS = shlex.split(os.environ.get("KFORGE_EVAL_FLAGS", ""))


BUSY_RETRIES = 2


def _verdict(stdout):
    try:
        return json.loads(stdout)
    except ValueError:
        return None


def _busy(stdout):
    v = _verdict(stdout)
    return bool(v) and v.get("status") == "infra_error" and any(
        d.get("code") == "busy" for d in v.get("diagnostics", []))


def _errors(stdout):
    """The verdict's status and error diagnostics, for a failure's first line (the verdict's
    end, which the message also shows, has no diagnostics)."""
    v = _verdict(stdout)
    if not v:
        return ""
    errors = ["%s: %s" % (d.get("code"), d.get("message", "")[:500])
              for d in v.get("diagnostics", []) if d.get("severity") == "error"]
    return " (%s; %s)" % (v.get("status"), " | ".join(errors) or "no error diagnostic")


def run(args, problem, candidate, baselines=True, env=None):
    cmd = [args.kforge, "eval", "--json", "--backend", args.backend, "--problem",
           os.path.join(args.problems, problem), "--candidate", candidate,
           "--timing-budget-ms", str(args.timing_budget_ms),
           "--call-timeout-s", str(args.call_timeout_s), "--policy", args.policy]
    if args.python:
        cmd += ["--python", args.python]
    cmd += EXTRA_FLAGS
    if not baselines:
        cmd += ["--no-baselines"]
    t0 = time.time()
    for attempt in range(1 + BUSY_RETRIES):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
        # "busy": the machine's load spoiled the timing (not measured, never stored; the verdict
        # says to evaluate it again). kforge already tried once more in the process; the suites
        # beside this one may keep the machine loaded longer, so it is evaluated again, as a
        # user would. Any other infra_error fails at once.
        if p.returncode != 3 or not _busy(p.stdout) or attempt == BUSY_RETRIES:
            break
        print("busy (%s): evaluated again" % os.path.basename(candidate), flush=True)
    wall = time.time() - t0
    if p.returncode != 0:
        e = AssertionError("exit code %d%s\nstdout: %s\nstderr: %s" % (
            p.returncode, _errors(p.stdout), p.stdout[-3000:], p.stderr[-3000:]))
        # The whole verdict (an infra_error's diagnostics come first in it, past the 3,000
        # characters above) goes to --results, so a device run brings back why.
        e.verdict = _verdict(p.stdout)
        e.stderr = p.stderr[-20000:]
        raise e
    return json.loads(p.stdout), wall


def lane_test(args):
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "data")
    cands = [os.path.join(args.examples, "broken", "crash.py"),
             os.path.join(args.examples, "broken", "hang.py"),
             os.path.join(data, "same_name_relu.py"),
             os.path.join(data, "same_name_wrong.py"),
             os.path.join(data, "dynamic_relu.py")]
    cmd = [args.kforge, "eval", "--json", "--backend", args.backend, "--problem",
           os.path.join(args.problems, "level1", "relu.py"), "--timing-budget-ms", "300",
           "--call-timeout-s", str(args.call_timeout_s), "--no-baselines"]
    for c in cands:
        cmd += ["--candidate", c]
    if args.python:
        cmd += ["--python", args.python]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr[-2000:])
    verdicts = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    got = [v["status"] for v in verdicts]
    assert got == ["runtime_error", "timeout", "ok", "incorrect", "ok"], got
    dyn = stage(verdicts[4], "build")
    assert dyn["deferred_to_run_time"] == 1, dyn
    ex = stage(verdicts[4], "execute")
    # The same code as same_name_relu.py, under the same key: compiled once between the two.
    # Either may come first: the lane runs a candidate whose build is done, and the run-time
    # build has nothing to wait for while same_name_relu's compile may still be running (seen
    # on a loaded machine: the run-time build compiled, the static one found it).
    static = stage(verdicts[2], "build")
    assert ex["run_time_builds"] == 1, ex
    assert ex["run_time_compiled"] + static["compiled"] <= 1, (ex, static)
    # ...and under one key: a single artifact holds that extension, whichever build made it
    # (same_name_wrong.py's has another fallback value; no other candidate of the suites uses
    # this name with this code).
    cache = os.environ.get("KFORGE_BUILD_CACHE") or os.environ.get("KFORGE_CACHE")
    if cache:
        holders = []
        for d in glob.glob(os.path.join(cache, "artifacts", "*", "")):
            try:
                with open(os.path.join(d, "result.json")) as f:
                    name = json.load(f).get("module_name")
                with open(os.path.join(d, "main.cpp")) as f:
                    code = f.read()
            except (OSError, ValueError):
                continue
            if name == "elementwise_add" and "in[i] > 0.0f ? in[i] : 0.0f;" in code:
                holders.append(d)
        assert len(holders) == 1, holders
    assert verdicts[2]["candidate"]["hash"] != verdicts[3]["candidate"]["hash"]


def one_lane(args):
    """All candidates of one problem through one `kforge eval` (one judge, one zygote)."""
    groups = {}
    for path, problem, expect, rule in examples(args.examples):
        groups.setdefault(problem, []).append((path, expect, rule))
    passed = failed = 0
    results = []
    for problem, items in sorted(groups.items()):
        cmd = [args.kforge, "eval", "--json", "--backend", args.backend, "--problem",
               os.path.join(args.problems, problem), "--timing-budget-ms",
               str(args.timing_budget_ms), "--call-timeout-s", str(args.call_timeout_s),
               "--policy", args.policy]
        for path, _e, _r in items:
            cmd += ["--candidate", path]
        if args.python:
            cmd += ["--python", args.python]
        cmd += EXTRA_FLAGS
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        wall = time.time() - t0
        try:
            # One candidate: one indented document; several: one verdict per line.
            verdicts = ([json.loads(p.stdout)] if len(items) == 1 else
                        [json.loads(line) for line in p.stdout.splitlines() if line.strip()])
        except ValueError:
            verdicts = []
        if p.returncode != 0 or len(verdicts) != len(items):
            failed += len(items)
            print("FAIL %s: exit %d, %d verdicts for %d candidates\n%s" % (
                problem, p.returncode, len(verdicts), len(items), p.stderr[-3000:]), flush=True)
            continue
        for (path, expect, rule), v in zip(items, verdicts):
            name = os.path.relpath(path, args.examples)
            results.append({"example": name, "expect": expect, "wall_s": wall / len(items),
                            "verdict": v})
            try:
                check(v, expect, rule, says_of(path))
                passed += 1
                codes = ",".join(sorted({d["code"] for d in v["diagnostics"] if d["severity"] == "error"}))
                print("PASS %-40s %-14s %s" % (name, v["status"], codes), flush=True)
            except AssertionError as e:
                failed += 1
                print("FAIL %-40s %s" % (name, str(e)[:1500]), flush=True)
    return passed, failed, results


def stage(v, name):
    for s in v["stages"]:
        if s["name"] == name:
            return s
    return None


def says_of(path):
    """An example's `# kforge-says: A | B` header: one of these texts must be in an error's
    message or hint (alternatives where toolchains differ in how the failure shows)."""
    with open(path) as f:
        says = dict(HEADER.findall(f.read(2000))).get("says")
    return [t.strip() for t in says.split(" | ")] if says else []


def check(v, expect, rule=None, says=()):
    """The facts each status must carry; raises AssertionError naming what is missing."""
    assert v["schema"] == 1, v["schema"]
    assert v["status"] == expect, "status %s, expected %s; diagnostics: %s" % (
        v["status"], expect, json.dumps(v["diagnostics"])[:2000])
    assert isinstance(v["feedback"], str) and v["feedback"], "empty feedback"
    errors = [d for d in v["diagnostics"] if d["severity"] == "error"]
    if expect == "ok":
        t = v["timing"]
        assert t["candidate_ms"]["median"] > 0 and t["candidate_ms"]["n"] >= 10, t
        assert t["eager_ms"] and t["eager_ms"] > 0, t
        assert v["speedup"]["vs_eager"] > 0, v["speedup"]
        assert v["correct_trials"]["passed"] == v["correct_trials"]["total"] >= 6, v["correct_trials"]
        assert v["reward"] >= 1.0, v["reward"]
        ex = next(s for s in v["stages"] if s["name"] == "execute")
        assert set(ex["load_phases_ms"]) >= {"device_start", "code", "model", "to_device"}, ex
        assert v["policy"] == POLICY, v["policy"]
        if rule and POLICY == "kernelbench":  # allowed under this policy, and named
            # ATen compute is seen running (pytorch_ops); what the profiler cannot see, a library
            # called from the kernel source (cuBLAS, H04) or a CUDA graph the kernel source
            # launches (H07_graph), is named by its static note.
            named = [d for d in v["diagnostics"]
                     if d["code"] in rule.split() and d["severity"] == "info"]
            assert v["pytorch_ops"] or (set(rule.split()) <= {"H04", "H07_graph"} and named), \
                "nothing the kernelbench policy allows is listed (rule %s)" % rule
    elif expect == "compile_error":
        assert any(d["stage"] == "build" and d["line"] > 0 and d["excerpt"] for d in errors), errors
        assert v["reward"] == -1.0
    elif expect == "runtime_error":
        assert errors and errors[0]["message"], errors
        assert v["reward"] == -1.0
    if says:
        told = " ".join(d["message"] + " " + (d.get("hint") or "") for d in errors)
        assert any(t in told for t in says), "none of %s in %s" % (says, told[:1500])
    elif expect == "timeout":
        assert any(d["code"] == "timeout" for d in errors), errors
        assert v["reward"] == -1.0
    elif expect == "incorrect":
        assert any(d["code"] in ("mismatch", "wrong_output", "H15", "H19") for d in errors), errors
        if rule and "H19" in rule.split():  # wrong on another size: named as shape-special
            assert any(d["code"] == "H19" and d["hint"] for d in errors), errors
        assert v["reward"] < 0
    elif expect == "cheat":
        # A cheat verdict names its rule (the rule code (docs/RULES.md)) in a diagnostic.
        codes = [d["code"] for d in errors]
        rules = rule.split() if rule else []
        assert not rules or set(rules) & set(codes), "rule %s not named; codes %s: %s" % (
            rule, codes, json.dumps(errors)[:1500])
        assert all(d["message"] and d["hint"] for d in errors if d["code"] in rules), errors
        assert v["reward"] == -1.0
    elif expect == "format_error":
        assert errors and errors[0]["code"] in ("no_model_new", "syntax_error", "no_code_block",
                                                "no_kernel"), errors
        assert v["reward"] == -1.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--examples", required=True)
    ap.add_argument("--problems", required=True)
    ap.add_argument("--python", default="")
    ap.add_argument("--timing-budget-ms", type=int, default=500)
    ap.add_argument("--call-timeout-s", type=int, default=20)
    ap.add_argument("--results", default="", help="write one JSON line per verdict here")
    ap.add_argument("--policy", default="strict", choices=["strict", "kernelbench"],
                    help="the policy to evaluate under (kforge-expect-kernelbench headers apply)")
    ap.add_argument("--one-lane", action="store_true",
                    help="evaluate all candidates of a problem in one kforge process (one judge)")
    ap.add_argument("--no-cache-test", action="store_true",
                    help="skip re-evaluating an honest example to check the build cache")
    ap.add_argument("--lane-test", action="store_true",
                    help="also run the one-lane test (CPU data in tests/integration/data)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="evaluate N candidates at a time, each in its own kforge process "
                         "(instead of --one-lane)")
    ap.add_argument("--warm-jobs", type=int, default=0,
                    help="first evaluate everything N at a time (results discarded) so the "
                         "measured pass finds every build in the cache")
    args = ap.parse_args()
    global POLICY
    POLICY = args.policy

    if args.warm_jobs > 0:
        from concurrent.futures import ThreadPoolExecutor
        todo = list(examples(args.examples))
        t0 = time.time()

        def warm(item):
            try:
                run(args, item[1], item[0], baselines=False)
            except (AssertionError, ValueError, subprocess.TimeoutExpired):
                pass
        with ThreadPoolExecutor(args.warm_jobs) as ex:
            list(ex.map(warm, todo))
        print("warmed %d examples in %.1f s" % (len(todo), time.time() - t0), flush=True)

    passed = failed = 0
    results = []
    honest = None
    if args.one_lane:
        passed, failed, results = one_lane(args)
    todo = [] if args.one_lane else list(examples(args.examples))
    runs = [None] * len(todo)
    if args.jobs > 1:
        # Each candidate in its own kforge process, N at a time; checked in order below.
        from concurrent.futures import ThreadPoolExecutor

        import threading
        partial_lock = threading.Lock()

        def attempt(item):
            try:
                done = run(args, item[1], item[0])
            except (AssertionError, ValueError, subprocess.TimeoutExpired) as e:
                done = e
            if args.results:
                # Each verdict as it comes, in RESULTS.partial: a run cut off by a device's time
                # limit still brings back what it finished (--results is written at the end).
                v, wall = (None, None) if isinstance(done, Exception) else done
                line = {"example": os.path.relpath(item[0], args.examples), "wall_s": wall,
                        "verdict": v if v is not None else getattr(done, "verdict", None),
                        "error": str(done)[:3000] if isinstance(done, Exception) else None}
                with partial_lock, open(args.results + ".partial", "a") as f:
                    f.write(json.dumps(line) + "\n")
            return done
        with ThreadPoolExecutor(args.jobs) as ex:
            runs = list(ex.map(attempt, todo))
    for (path, problem, expect, rule), done in zip(todo, runs):
        name = os.path.relpath(path, args.examples)
        try:
            if isinstance(done, Exception):
                raise done
            v, wall = done if done is not None else run(args, problem, path)
            results.append({"example": name, "expect": expect, "wall_s": wall, "verdict": v})
            check(v, expect, rule, says_of(path))
            if expect == "ok" and honest is None:
                honest = (path, problem)
            passed += 1
            print("PASS %-40s %-14s %6.1f s" % (name, v["status"], wall), flush=True)
        except (AssertionError, ValueError, subprocess.TimeoutExpired) as e:
            failed += 1
            if results and results[-1]["example"] == name:  # the verdict came, its check failed
                results[-1]["failed"] = str(e)[:3000]
            else:  # no verdict checked: the whole reply, if any, for the record
                results.append({"example": name, "expect": expect, "failed": str(e)[:3000],
                                "verdict": getattr(e, "verdict", None),
                                "stderr": getattr(e, "stderr", None)})
            print("FAIL %-40s %s" % (name, str(e)[:3000]), flush=True)

    # The second evaluation of a candidate must not run the compiler.
    if args.no_cache_test:
        pass
    elif honest:
        try:
            v, wall = run(args, honest[1], honest[0])
            b = stage(v, "build")
            assert v["status"] == "ok", v["status"]
            assert b["cache_hit"] is True and b["compiled"] == 0, b
            passed += 1
            print("PASS %-40s second evaluation compiled nothing (build %.0f ms)" % (
                "cache:" + os.path.basename(honest[0]), b["ms"]), flush=True)
        except (AssertionError, ValueError, subprocess.TimeoutExpired) as e:
            failed += 1
            print("FAIL cache: %s" % e, flush=True)
    else:
        failed += 1
        print("FAIL no honest example was found in %s" % args.examples)

    # Another cache (its own verdict store) over the same build cache (KFORGE_BUILD_CACHE, or
    # the first cache's own folder): the candidate is evaluated again, its extension is not
    # compiled again.
    if honest and not args.no_cache_test and os.environ.get("KFORGE_CACHE"):
        other = tempfile.mkdtemp(prefix="kforge-other-store.")
        env = dict(os.environ, KFORGE_CACHE=other,
                   KFORGE_BUILD_CACHE=os.environ.get("KFORGE_BUILD_CACHE") or os.environ["KFORGE_CACHE"])
        try:
            v, wall = run(args, honest[1], honest[0], baselines=False, env=env)
            b = stage(v, "build")
            assert v["status"] == "ok" and stage(v, "correctness"), v["status"]
            assert b["cache_hit"] is True and b["compiled"] == 0, b
            assert os.path.exists(os.path.join(other, "kforge.db")), "no store in the new cache"
            assert not os.path.exists(os.path.join(other, "artifacts")), "artifacts in the new cache"
            passed += 1
            print("PASS %-40s a new store over the same build cache compiled nothing" % (
                "build-cache:" + os.path.basename(honest[0])), flush=True)
        except (AssertionError, ValueError, subprocess.TimeoutExpired) as e:
            failed += 1
            print("FAIL build-cache: %s" % e, flush=True)
        finally:
            shutil.rmtree(other, ignore_errors=True)

    # One lane, several candidates: a crash and a hang must not take the judge down, and two
    # candidates that reuse one extension name must each load their own code.
    if args.lane_test:
        try:
            lane_test(args)
            passed += 1
            print("PASS %-40s crash, hang, same-name and run-time builds in one lane" % "lane", flush=True)
        except (AssertionError, ValueError, subprocess.TimeoutExpired) as e:
            failed += 1
            print("FAIL lane: %s" % str(e)[:3000], flush=True)

    if args.results:
        with open(args.results, "w") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
