"""Tests for kforge_runner.synth's check: a synthesized low-precision problem whose reference
rounds away from float math by more than its own tolerance is rejected (an honest kernel that
accumulates in float32 would fail it), and a well-conditioned one is kept. Run with
/usr/bin/python3 -m unittest discover -s tests/runner (needs torch)."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

from kforge_runner import synth  # noqa: E402

# The judge's tolerances as kforge sends them (src/common/tolerance.cc's defaults).
TOL = {"float32": 1e-4, "float64": 1e-7, "float16": 1e-2, "bfloat16": 1e-2}

PROBLEM = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, 256, dtype=torch.bfloat16))

    def forward(self, x):
        {body}


def get_inputs():
    return [torch.randn(64, 4096, dtype=torch.bfloat16)]


def get_init_inputs():
    return [4096]
"""


class ConditioningTest(unittest.TestCase):
    def check(self, body):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.py")
            with open(path, "w") as f:
                f.write(PROBLEM.format(body=body))
            return synth.check(path, "cpu", (11,), TOL, TOL)

    def test_a_chain_rounded_in_bfloat16_before_a_long_matmul_is_rejected(self):
        # silu and + rounded to bfloat16, then a 4096-long dot product: the order of rounding
        # moves results past 1e-2 (the loop run's bf16 silu -> add -> matmul -> tanh problem).
        out = self.check("return torch.tanh((torch.nn.functional.silu(x) + x) @ self.w)")
        self.assertFalse(out["ok"])
        self.assertEqual([f["code"] for f in out["findings"]], ["ill_conditioned"])
        self.assertIn("bfloat16", out["findings"][0]["message"])

    def test_elementwise_bfloat16_is_kept(self):
        out = self.check("return torch.relu(x) * 2 + self.w.sum() * 0")
        self.assertTrue(out["ok"], out["findings"])
        self.assertIsNotNone(out["reference_ms"])

    def test_check_needs_the_tolerances(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
            synth.main(["check", "--atol", json.dumps(TOL), "p.py"])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("check needs --atol and --rtol", err.getvalue())


if __name__ == "__main__":
    unittest.main()
