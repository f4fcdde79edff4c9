"""Tests for the judge's check (runner/kforge_runner/check.py): the tolerances come only from the
request (kforge sends both maps whole, src/common/tolerance.h), a dtype they do not name is
compared exactly, and a check without them is refused naming the field.
Run with /usr/bin/python3 -m unittest discover -s tests/runner (needs torch)."""
import os
import sys
import unittest
from types import SimpleNamespace

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

from kforge_runner import check, judge  # noqa: E402


def trial(out, ref):
    """A slot the candidate has run on: its input unchanged, `out` written, `ref` expected."""
    x = torch.randn(16)
    return SimpleNamespace(kept=([x], [ref]), in_bufs=[x.clone()], out_bufs=[out],
                           swapped=False, recipe=None)


class ToleranceTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.ref = torch.rand(64, 32)  # in [0, 1): rtol * |ref| stays below 1e-4

    def passes(self, out, atol, rtol):
        reply = check.check_trial(None, trial(out, self.ref), {"atol": atol, "rtol": rtol})
        self.assertTrue(reply["ok"], reply)
        return reply["pass"], reply["outputs"][0]

    def test_the_requests_tolerances_decide(self):
        off = self.ref + 5e-4
        ok, facts = self.passes(off, {"float32": 1e-3}, {"float32": 1e-4})
        self.assertTrue(ok, facts)
        self.assertEqual((facts["atol"], facts["rtol"]), (1e-3, 1e-4))
        ok, facts = self.passes(off, {"float32": 1e-4}, {"float32": 1e-4})
        self.assertFalse(ok, facts)
        self.assertEqual((facts["atol"], facts["rtol"]), (1e-4, 1e-4))

    def test_a_dtype_the_maps_do_not_name_is_exact(self):
        other = {"float16": 1.0, "bfloat16": 1.0}
        self.assertTrue(self.passes(self.ref.clone(), other, other)[0])
        ok, facts = self.passes(self.ref + 1e-6, other, other)
        self.assertFalse(ok)
        self.assertEqual((facts["atol"], facts["rtol"]), (0.0, 0.0))

    def test_integer_outputs_are_exact(self):
        self.ref = torch.arange(10)
        maps = {"float32": 1e-4, "float64": 1e-7, "float16": 1e-2, "bfloat16": 1e-2}
        self.assertTrue(self.passes(self.ref.clone(), maps, maps)[0])
        self.assertFalse(self.passes(self.ref + 1, maps, maps)[0])


class FakeChannel:
    def __init__(self, requests):
        self.requests = iter(requests)
        self.sent = []

    def recv(self):
        try:
            return next(self.requests)
        except StopIteration:
            raise EOFError

    def send(self, msg):
        self.sent.append(msg)


class RefusedTest(unittest.TestCase):
    def test_a_check_without_tolerances_is_refused_naming_the_field(self):
        tol = {"float32": 1e-4}
        chan = FakeChannel([{"op": "check", "problem": "p", "slot": "main", "rtol": tol},
                            {"op": "check", "problem": "p", "slot": "main", "atol": tol}])
        judge.Judge(chan).serve()
        self.assertEqual([r["ok"] for r in chan.sent], [False, False])
        self.assertIn("judge 'check' request: missing required field 'atol'",
                      chan.sent[0]["message"])
        self.assertIn("judge 'check' request: missing required field 'rtol'",
                      chan.sent[1]["message"])


if __name__ == "__main__":
    unittest.main()
