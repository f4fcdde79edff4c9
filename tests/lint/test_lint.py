"""Tests for kforge_runner.lint: run with /usr/bin/python3 -m unittest discover -s tests/lint."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "..", "runner")
sys.path.insert(0, RUNNER)

from kforge_runner import lint  # noqa: E402

# The judge's tolerances as kforge sends them (src/common/tolerance.cc's defaults).
TOL = {"float32": 1e-4, "float64": 1e-7, "float16": 1e-2, "bfloat16": 1e-2}
TOL_ARGS = ["--atol", json.dumps(TOL), "--rtol", json.dumps(TOL)]

TEMPLATE = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {expr}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
'''

PROBLEMS = {
    # exactly constant: zeros pass
    "const_zero.py": ("x * 0.0", "torch.randn(64, 128)"),
    # constant but not zero: the mean passes
    "const_seven.py": ("torch.ones_like(x) * 7.0", "torch.randn(64, 128)"),
    # ReLU on non-negative inputs is the identity
    "relu_of_rand.py": ("torch.relu(x)", "torch.rand(64, 128)"),
    # varies, but far below the tolerance around a non-zero level
    "near_const.py": ("1.0 + 1e-6 * torch.tanh(x)", "torch.randn(64, 128)"),
    # every row of the batch gives the same output
    "batch_blind.py": ("torch.tanh(x[:1]).expand_as(x).clone()",
                       "torch.randn(64, 128)"),
    # an ordinary problem
    "softmax.py": ("torch.softmax(x, dim=-1)", "torch.randn(64, 128)"),
    "gelu.py": ("torch.nn.functional.gelu(x)", "torch.randn(32, 256)"),
}


class LintTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        for name, (expr, inputs) in PROBLEMS.items():
            with open(os.path.join(cls.tmp.name, name), "w") as f:
                f.write(TEMPLATE.format(expr=expr, inputs=inputs))
        cls.results = {os.path.basename(r["problem"]): r
                       for r in (lint.lint_problem(os.path.join(cls.tmp.name, name), TOL, TOL)
                                 for name in sorted(PROBLEMS))}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def codes(self, name):
        return {f["code"] for f in self.results[name]["findings"]}

    def test_a_folder_is_refused_with_where_folders_are_walked(self):
        # kforge lint-problems finds a folder's problems (src/problems, ProblemFiles) and
        # hands the runner files; the runner walks no folder of its own.
        err = io.StringIO()
        with self.assertRaises(SystemExit) as e, contextlib.redirect_stderr(err):
            lint.main(["--atol", json.dumps(TOL), "--rtol", json.dumps(TOL), self.tmp.name])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("kforge lint-problems finds the problems in a folder", err.getvalue())

    def test_constant_zero_flagged(self):
        self.assertFalse(self.results["const_zero.py"]["ok"])
        self.assertIn("zero_output", self.codes("const_zero.py"))

    def test_constant_flagged(self):
        self.assertFalse(self.results["const_seven.py"]["ok"])
        self.assertIn("constant_output", self.codes("const_seven.py"))

    def test_identity_flagged(self):
        self.assertFalse(self.results["relu_of_rand.py"]["ok"])
        self.assertIn("identity_output", self.codes("relu_of_rand.py"))

    def test_near_constant_flagged(self):
        self.assertFalse(self.results["near_const.py"]["ok"])
        self.assertTrue(self.codes("near_const.py") & {"constant_output", "low_variation", "low_std"})

    def test_batch_blind_flagged(self):
        self.assertIn("subsample_output", self.codes("batch_blind.py"))

    def test_normal_not_flagged(self):
        for name in ("softmax.py", "gelu.py"):
            self.assertTrue(self.results[name]["ok"], self.results[name])
            self.assertEqual(self.results[name]["findings"], [])

    def test_load_error_reported(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "broken.py")
            with open(p, "w") as f:
                f.write("class Model:\n    pass\n")  # no get_inputs
            r = lint.lint_problem(p, TOL, TOL)
        self.assertFalse(r["ok"])
        self.assertEqual(r["findings"][0]["code"], "load_error")

    def test_command_line(self):
        env = dict(os.environ, PYTHONPATH=RUNNER)
        p = subprocess.run([sys.executable, "-m", "kforge_runner.lint"] + TOL_ARGS +
                           [os.path.join(self.tmp.name, "softmax.py"),
                            os.path.join(self.tmp.name, "const_zero.py")],
                           capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [json.loads(l) for l in p.stdout.splitlines()]
        self.assertEqual([os.path.basename(l["problem"]) for l in lines], ["softmax.py", "const_zero.py"])
        self.assertEqual([l["ok"] for l in lines], [True, False])
        for l in lines:
            self.assertEqual(set(l), {"problem", "ok", "findings", "contract", "signed_trial",
                                  "trials", "timed_inputs"})

    def test_the_tolerances_are_the_ones_given(self):
        # near_const varies by about 1e-6: flagged at 1e-4, not at 1e-9; float32 left out of
        # the maps is compared exactly, as the judge does.
        path = os.path.join(self.tmp.name, "near_const.py")
        tight = dict(TOL, float32=1e-9)
        self.assertEqual(lint.lint_problem(path, tight, tight)["findings"], [])
        no_float32 = {"float16": 1e-2}
        self.assertEqual(lint.lint_problem(path, no_float32, no_float32)["findings"], [])

    def test_the_command_line_needs_the_tolerances(self):
        env = dict(os.environ, PYTHONPATH=RUNNER)
        path = os.path.join(self.tmp.name, "softmax.py")
        for args, missing in (([], "--atol, --rtol"), (TOL_ARGS[:2], "--rtol")):
            p = subprocess.run([sys.executable, "-m", "kforge_runner.lint"] + args + [path],
                               capture_output=True, text=True, env=env, timeout=300)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("the following arguments are required: " + missing, p.stderr)
        p = subprocess.run([sys.executable, "-m", "kforge_runner.lint", "--atol", "[1e-4]",
                            "--rtol", json.dumps(TOL), path],
                           capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("argument --atol: not a JSON object", p.stderr)

    def test_contract_reported(self):
        # relu_of_rand draws torch.rand: non-negative, in [0, 1); its signed trial is skipped.
        c = self.results["relu_of_rand.py"]["contract"]
        self.assertEqual(len(c), 1)
        self.assertTrue(c[0]["nonnegative"] and c[0]["unit"] and c[0]["unit_open"])
        self.assertIn("in [0, 1)", c[0]["text"])
        self.assertTrue(self.results["relu_of_rand.py"]["signed_trial"].startswith("skipped"))
        # randn: nothing holds, and the signed trial runs.
        c = self.results["softmax.py"]["contract"]
        self.assertEqual(set(c[0]) - {"input", "dtype", "shape", "text"}, set(), c)
        self.assertEqual(self.results["softmax.py"]["signed_trial"], "runs")

    def test_every_trial_is_checked_against_the_contract(self):
        # The judge's perturbed trials, made as the judge makes them, stay inside the contract
        # (A' swaps, the signed trial, the timed calls' fresh inputs).
        r = self.results["softmax.py"]
        self.assertEqual(r["trials"]["outside"], [])
        self.assertEqual(r["trials"]["checked"][0], "swapped")
        self.assertIn("signed", r["trials"]["checked"])
        self.assertEqual(sum(t.startswith("timed call") for t in r["trials"]["checked"]),
                         len(lint.TIMED_CALLS))
        self.assertEqual(r["timed_inputs"], ["a factor per element"])
        # No signed trial where none may run.
        self.assertNotIn("signed", self.results["relu_of_rand.py"]["trials"]["checked"])

    def test_a_trial_that_leaves_the_contract_is_named(self):
        # A swap that ignores the contract (swaps across a triangular input's zeros) must be
        # reported with the trial, the input and the invariant it broke.
        path = os.path.join(self.tmp.name, "tril.py")
        with open(path, "w") as f:
            f.write(TEMPLATE.format(expr="x @ x", inputs="torch.tril(torch.randn(48, 48))"))
        real = lint.contract.swap_some
        lint.contract.swap_some = lambda inputs, seed, c=None, pairs=16, in_place=False: real(
            inputs, seed, None, pairs, in_place)
        try:
            r = lint.lint_problem(path, TOL, TOL, contract_only=True)
        finally:
            lint.contract.swap_some = real
        self.assertIn({"trial": "swapped", "input": 0, "invariant": "lower-triangular"},
                      r["trials"]["outside"], r)
        self.assertEqual(lint.lint_problem(path, TOL, TOL, contract_only=True)["trials"]["outside"], [])

    def test_contract_only_runs_no_reference(self):
        # const_zero's reference is all zeros (flagged normally); contract-only tries no answer.
        r = lint.lint_problem(os.path.join(self.tmp.name, "const_zero.py"), TOL, TOL,
                              contract_only=True)
        self.assertTrue(r["ok"])
        self.assertEqual(r["findings"], [])
        self.assertEqual(r["contract"][0]["shape"], [64, 128])
        self.assertEqual(r["trials"]["outside"], [])


if __name__ == "__main__":
    unittest.main()
