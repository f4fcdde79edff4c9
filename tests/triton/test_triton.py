"""The Triton path on the CPU, with the stand-in for Triton (tests/triton/fake_triton).

What CI can check without a GPU or Triton: the stand-in behaves like the parts of Triton
kforge relies on; the candidate host's hooks count launches, suppress them in the ghost replay,
time compiles and keep compile errors, and keep the autotuner's own PyTorch ops out of the
profile; the sandbox lets a candidate write its Triton cache and nothing beside it; kforge check
detects the family and applies the static rules; and kforge eval judges the Triton examples end
to end (the red team runs as its own ctest, tests/redteam/run.sh ... triton, under both
policies).

Usage: /usr/bin/python3 tests/triton/test_triton.py --kforge build/kforge
           --sandbox-lib build/libkforge_sandbox.so [unittest arguments]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "runner"), os.path.join(HERE, "fake_triton")]

import torch  # noqa: E402
import triton  # noqa: E402  (the stand-in)
import triton.language as tl  # noqa: E402
from kforge_runner import guard, sandbox, triton_hooks  # noqa: E402

ARGS = None
PYTHON = os.path.join(HERE, "python.sh")


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.maximum(tl.load(x_ptr + offsets, mask=mask), 0.0), mask=mask)


@triton.jit
def broken_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, undefined_name, mask=offsets < n)  # noqa: F821


# What real Triton refuses at compile time and the stand-in must refuse too (issue 31: two red-team
# headers were written against a stand-in that ran these): a global that is not a constexpr, and
# torch called in a kernel or in a @jit function it calls.
ROWS = 4
ROWS_CONSTEXPR = tl.constexpr(4)
ROWS_ANNOTATED: tl.constexpr = 4


@triton.jit
def plain_global_kernel(x_ptr):
    tl.store(x_ptr + tl.arange(0, ROWS), 1.0)


@triton.jit
def constexpr_global_kernel(x_ptr):
    tl.store(x_ptr + tl.arange(0, ROWS_CONSTEXPR), tl.full((ROWS_ANNOTATED,), 2.0, tl.float32))


@triton.jit
def torch_kernel(x_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, torch.relu(tl.load(x_ptr + offsets)))


@triton.jit
def torch_helper(x):
    return torch.relu(x)


@triton.jit
def calls_torch_helper_kernel(x_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, torch_helper(tl.load(x_ptr + offsets)))


HOOKS = triton_hooks.State()


def setUpModule():
    triton_hooks.install(HOOKS)  # once: it patches the stand-in's classes for this process


def launch(x):
    y = torch.full_like(x, float("nan"))
    relu_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel(), BLOCK=64)
    return y


class StandIn(unittest.TestCase):
    def test_a_launch_runs_every_program_of_the_grid(self):
        x = torch.randn(1000)
        self.assertTrue(torch.equal(launch(x), torch.relu(x)))

    def test_a_compile_error_in_tritons_form(self):
        with self.assertRaises(triton.CompilationError) as e:
            broken_kernel[(1,)](torch.zeros(4), 4, BLOCK=4)
        text = str(e.exception)
        col = "    tl.store(x_ptr + offsets, undefined_name".index("undefined_name")
        self.assertTrue(text.startswith("at 3:%d:" % col), text)
        self.assertIn("undefined_name is not defined", text)

    def test_a_global_that_is_not_a_constexpr_is_refused(self):
        with self.assertRaises(triton.CompilationError) as e:
            plain_global_kernel[(1,)](torch.zeros(4))
        self.assertIn("Cannot access global variable ROWS from within @jit", str(e.exception))
        self.assertTrue(str(e.exception).startswith("at 2:"), str(e.exception))
        # tl.constexpr(4), and a global annotated tl.constexpr, are read as their values.
        x = torch.zeros(4)
        constexpr_global_kernel[(1,)](x)
        self.assertTrue(torch.equal(x, torch.full((4,), 2.0)))

    def test_torch_called_in_a_kernel_is_refused(self):
        with self.assertRaises(triton.CompilationError) as e:
            torch_kernel[(1,)](torch.zeros(4), BLOCK=4)
        self.assertIn("torch.relu is not a Triton function", str(e.exception))
        # In a @jit function the kernel calls: refused at the call, when the kernel compiles.
        with self.assertRaises(triton.CompilationError) as e:
            calls_torch_helper_kernel[(1,)](torch.zeros(4), BLOCK=4)
        self.assertTrue(str(e.exception).startswith("at 3:"), str(e.exception))
        self.assertIn("in torch_helper, called here: TypeError('torch.relu", str(e.exception))


class Hooks(unittest.TestCase):
    def test_hooks_found_by_name(self):
        self.assertEqual(HOOKS.hooks, ["launch", "compiled_launch", "compile", "autotune"])
        self.assertIn("stand-in", HOOKS.version)

    def test_launches_are_counted_and_the_ghost_replay_suppresses_them(self):
        x = torch.randn(300)
        before = HOOKS.launches
        launch(x)
        launch(x)
        self.assertEqual(HOOKS.launches - before, 2)
        HOOKS.ghost = True
        try:
            y = launch(x)
        finally:
            HOOKS.ghost = False
        self.assertTrue(torch.isnan(y).all(), "a ghost launch wrote its output")
        self.assertEqual(HOOKS.launches - before, 3)

    def test_compiles_are_timed_and_errors_kept(self):
        compiles = HOOKS.compiles
        launch(torch.randn(10, dtype=torch.float64))  # a new specialization compiles again
        self.assertEqual(HOOKS.compiles, compiles + 1)
        HOOKS.compile_error = None
        with self.assertRaises(triton.CompilationError):
            broken_kernel[(1,)](torch.zeros(8), 8, BLOCK=8)
        kernel, message = HOOKS.compile_error
        self.assertEqual(kernel, "broken_kernel")
        self.assertIn("at 3:", message)

    def test_kernel_work_and_autotuning_stay_out_of_the_profile(self):
        calls = []

        def pre_hook(nargs):  # candidate code: seen in the chosen config's real launch only
            calls.append(1)
            torch.ones(2).exp()

        tuned = triton.autotune([triton.Config({"BLOCK": 32}, pre_hook=pre_hook),
                                 triton.Config({"BLOCK": 64}, pre_hook=pre_hook)],
                                key=["n"])(relu_kernel)
        x = torch.randn(500)
        y = torch.empty_like(x)
        _, facts = guard.profile(lambda: tuned[lambda m: (triton.cdiv(500, m["BLOCK"]),)](
            x, y, 500), cuda=False)
        self.assertTrue(torch.equal(y, torch.relu(x)))
        self.assertEqual(len(calls), 3)  # two timed configurations, then the chosen one
        # The real launch's pre_hook is seen once; the kernel's own work (numpy) never is.
        self.assertIn("aten::exp", facts["aten"])
        with torch.autograd.profiler_legacy.profile() as prof:
            tuned.run(x, y, 499, grid=(20,), warmup=False)
        scoped = [e for e in prof.function_events if e.name == guard.EXCLUDED_SCOPE]
        self.assertEqual(len(scoped), 2, "the two benchmark runs of a new key are scoped")


class Sandbox(unittest.TestCase):
    def test_a_candidate_writes_its_triton_cache_and_nothing_beside_it(self):
        if sandbox.probe().get("filesystem") != "landlock":
            self.skipTest("no Landlock here")
        with tempfile.TemporaryDirectory() as tmp:
            work, mine, other = (os.path.join(tmp, n) for n in ("work", "triton/a", "triton/b"))
            for d in (work, mine, other):
                os.makedirs(d)
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    state, error = sandbox.confine(work, mine)
                    assert error is None and state.startswith("on"), (state, error)
                    assert os.environ["TRITON_CACHE_DIR"] == mine
                    for ok in (work, mine):
                        with open(os.path.join(ok, "f"), "w") as f:
                            f.write("x")
                    for denied in (other, tmp):
                        try:
                            open(os.path.join(denied, "f"), "w").close()
                            os._exit(3)
                        except PermissionError:
                            pass
                    code = 0
                except BaseException as e:  # noqa: BLE001 - reported through the exit code
                    print("sandbox child:", e, file=sys.stderr)
                os._exit(code)
            _, status = os.waitpid(pid, 0)
            self.assertEqual(os.waitstatus_to_exitcode(status), 0)


def kforge(*args, check=False):
    p = subprocess.run([ARGS.kforge] + list(args), capture_output=True, text=True, timeout=600,
                       cwd=ROOT)
    if check and p.returncode != 0:
        raise AssertionError("kforge %s: exit %d\n%s" % (args, p.returncode, p.stderr[-2000:]))
    return p


def checked(*args):
    p = kforge("check", "--json", *args)
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def headers(path):
    with open(path) as f:
        return dict(line[len("# kforge-"):].strip().split(": ", 1)
                    for line in f.read(2000).splitlines() if line.startswith("# kforge-"))


class Check(unittest.TestCase):
    def files(self, folder):
        folder = os.path.join(ROOT, folder)
        return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".py"))

    def test_the_family_is_detected_from_the_text(self):
        triton_files = self.files("examples/triton") + self.files("tests/redteam/triton")
        self.assertEqual({c["family"] for c in checked(*triton_files)}, {"triton"})
        self.assertEqual({c["family"] for c in checked(*self.files("examples/cpu"))},
                         {"load_inline"})

    def test_the_family_named_by_the_user(self):
        relu = os.path.join(ROOT, "examples/triton/relu.py")
        [c] = checked("--family", "load_inline", relu)
        self.assertEqual((c["outcome"], c["diagnostics"][-1]["code"]), ("format_error", "no_kernel"))
        [c] = checked("--family", "triton", os.path.join(ROOT, "examples/cpu/relu.py"))
        self.assertEqual(c["outcome"], "format_error")
        self.assertIn("@triton.jit", c["diagnostics"][-1]["message"])

    def test_static_findings_agree_with_the_red_teams_headers(self):
        for policy in ("strict", "kernelbench"):
            for c in checked("--policy", policy, *self.files("tests/redteam/triton")):
                h = headers(c["candidate"])
                expect = h.get("expect-kernelbench", h["expect"]) if policy == "kernelbench" \
                    else h["expect"]
                rules = (h.get("rule-kernelbench", h.get("rule", "")) if policy == "kernelbench"
                         else h.get("rule", "")).split()
                errors = [d["code"] for d in c["diagnostics"] if d["severity"] == "error"]
                if c["outcome"] == "cheat":
                    self.assertEqual(expect, "cheat", c["candidate"])
                    self.assertTrue(set(errors) & set(rules), (c["candidate"], errors, rules))


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="kforge-triton-")
        self.addCleanup(self.tmp.cleanup)

    def test_the_examples_get_their_verdicts(self):
        cache = self.tmp.name
        p = subprocess.run(
            [sys.executable, os.path.join(ROOT, "tests/integration/eval_examples.py"),
             "--kforge", ARGS.kforge, "--backend", "cpu", "--examples",
             os.path.join(ROOT, "examples/triton"), "--problems", os.path.join(ROOT, "problems"),
             "--python", PYTHON, "--no-cache-test", "--timing-budget-ms", "300",
             "--call-timeout-s", "20", "--one-lane"],
            capture_output=True, text=True, timeout=1800, env=dict(os.environ, KFORGE_CACHE=cache),
            cwd=ROOT)
        print(p.stdout[-3000:], file=sys.stderr)
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        self.assertIn("4 passed, 0 failed", p.stdout)

    def test_a_verdict_records_the_in_process_build_and_the_cache(self):
        cache = self.tmp.name
        p = subprocess.run(
            [ARGS.kforge, "eval", "--json", "--backend", "cpu", "--python", PYTHON,
             "--problem", "problems/level1/relu.py", "--candidate", "examples/triton/relu.py",
             "--timing-budget-ms", "200", "--no-baselines"],
            capture_output=True, text=True, timeout=900, cwd=ROOT,
            env=dict(os.environ, KFORGE_CACHE=cache))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        v = json.loads(p.stdout)
        self.assertEqual((v["status"], v["candidate"]["format"]), ("ok", "triton"))
        build = [s for s in v["stages"] if s["name"] == "build"][0]
        self.assertTrue(build["in_process"] and build["ok"])
        self.assertEqual((build["family"], build["compiled"]), ("triton", 1))
        self.assertGreater(build["launches"], 9)  # every trial, the timed calls, the ghost replay
        folders = os.listdir(os.path.join(cache, "triton"))
        self.assertEqual(len(folders), 1)  # the candidate's own Triton cache, made for it


class Bench(unittest.TestCase):
    def test_a_mixed_bench_reports_each_family(self):
        """load_inline and Triton samples in one kforge bench: metrics overall, per level and
        per family (a column each in the summary, `families` in results.json)."""
        with tempfile.TemporaryDirectory(prefix="kforge-triton-bench-") as tmp:
            samples = {"relu": ["examples/cpu/relu.py", "examples/triton/relu.py",
                                "tests/redteam/triton/h11_abs_kernel.py"],
                       "softmax": ["examples/triton/softmax.py"]}
            for problem, files in samples.items():
                folder = os.path.join(tmp, "samples/level1", problem)
                os.makedirs(folder)
                for i, f in enumerate(files):
                    with open(os.path.join(ROOT, f)) as src, \
                            open(os.path.join(folder, "sample_%d.py" % i), "w") as dst:
                        dst.write(src.read())
            p = subprocess.run(
                [ARGS.kforge, "bench", "--backend", "cpu", "--python", PYTHON, "--cache",
                 os.path.join(tmp, "cache"), "--problems", os.path.join(ROOT, "problems/level1"),
                 "--samples", os.path.join(tmp, "samples"), "--out", os.path.join(tmp, "out"),
                 "--trials", "2", "--timing-budget-ms", "200", "--call-timeout-s", "30"],
                capture_output=True, text=True, timeout=1800, cwd=ROOT)
            self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
            with open(os.path.join(tmp, "out/results.json")) as f:
                results = json.load(f)
        families = results["families"]
        self.assertEqual(sorted(families), ["load_inline", "triton"])
        self.assertEqual((families["load_inline"]["samples"], families["load_inline"]["correct"]),
                         (1, 1))
        self.assertEqual((families["triton"]["samples"], families["triton"]["correct"]), (3, 2))
        self.assertEqual(families["triton"]["problems"], 2)
        self.assertEqual(results["overall"]["samples"], 4)
        header = [line for line in p.stdout.splitlines() if "overall" in line][0]
        self.assertEqual(header.split(), ["overall", "level1", "load_inline", "triton"])


class Generate(unittest.TestCase):
    """kforge generate --family triton against a scripted model server: the Triton format and
    system message are asked for, a compile error comes back with its line, the fix is ok."""

    def test_a_triton_compile_error_is_fed_back_and_repaired(self):
        sys.path.insert(0, os.path.join(ROOT, "tests", "generate"))
        from fake_model_server import FakeModelServer
        with open(os.path.join(ROOT, "examples/triton/broken/compile_error.py")) as f:
            broken = f.read()
        with open(os.path.join(ROOT, "examples/triton/relu.py")) as f:
            honest = f.read()
        fence = "Here it is.\n\n```python\n%s```\n"
        with tempfile.TemporaryDirectory(prefix="kforge-triton-gen-") as tmp, \
                FakeModelServer([fence % broken, fence % honest]) as server:
            p = subprocess.run(
                [ARGS.kforge, "generate", "--family", "triton", "--problem",
                 "problems/level1/relu.py", "--model-url", server.url, "--model", "fake-coder",
                 "--out", os.path.join(tmp, "out"), "--samples", "1", "--turns", "2",
                 "--retries", "0", "--backend", "cpu", "--python", PYTHON, "--cache",
                 os.path.join(tmp, "cache"), "--trials", "2", "--timing-budget-ms", "100"],
                capture_output=True, text=True, timeout=900, cwd=ROOT)
            bodies = [q["body"] for q in server.requests]
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        self.assertIn("sample 0 turn 1: compile_error", p.stdout)
        self.assertIn("sample 0 turn 2: ok", p.stdout)
        first = bodies[0]["messages"]
        self.assertIn("Triton kernels", first[0]["content"])
        self.assertIn("kernel[grid](...)", first[1]["content"])
        # The repair prompt names the line Triton's compiler refused (line 16 of the file).
        repair = bodies[1]["messages"][-1]["content"]
        self.assertIn("line 16", repair)
        self.assertIn("zero is not defined", repair)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--sandbox-lib", default="")
    ARGS, rest = ap.parse_known_args()
    ARGS.kforge = os.path.abspath(ARGS.kforge)
    if ARGS.sandbox_lib:
        os.environ["KFORGE_SANDBOX_LIB"] = os.path.abspath(ARGS.sandbox_lib)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
