"""Tests for the judge's memory model (runner/kforge_runner/judge.py, slots.py and check.py;
docs/PROTOCOL.md "Memory") on the CPU: comparisons in chunks agree with one pass, the timed-input rewrite of a large input
is the same in the candidate and the judge, big slots keep no copies, and loaded problems'
models are set aside under a memory budget and come back with the same weights.
Run with /usr/bin/python3 -m unittest discover -s tests/runner (needs torch)."""
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

import torch  # noqa: E402

from kforge_runner import check, common, judge  # noqa: E402

PROBLEM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        return self.lin(x)

def get_inputs():
    return [torch.randn(4, N)]

def get_init_inputs():
    return [N]

N = %d
'''


class CompareTest(unittest.TestCase):
    def test_chunks_give_the_same_account_as_one_pass(self):
        torch.manual_seed(0)
        ref = torch.randn(37, 53)
        out = ref.clone()
        out[3, 7] += 1.0
        out[20, 1] = float("nan")
        out[30, 50] -= 0.5
        whole = check.compare(out, ref, 1e-4, 1e-4)
        with mock.patch.object(check, "COMPARE_CHUNK", 64):
            chunked = check.compare(out, ref, 1e-4, 1e-4)
        self.assertFalse(whole[0])
        self.assertEqual(whole, chunked)
        self.assertEqual(chunked[1]["bad_elements"], 3)
        self.assertEqual(chunked[1]["first_bad_index"], [3, 7])
        self.assertEqual(chunked[1]["nonfinite_where_ref_finite"], 1)

    def test_a_match_passes_in_chunks(self):
        ref = torch.randn(1000)
        with mock.patch.object(check, "COMPARE_CHUNK", 7):
            self.assertTrue(check.compare(ref.clone(), ref, 1e-4, 1e-4)[0])

    def test_a_match_reports_its_largest_errors(self):
        ref = torch.ones(1000)
        out = ref.clone()
        out[10] += 5e-5
        out[900] -= 2e-5
        with mock.patch.object(check, "COMPARE_CHUNK", 64):
            ok, facts = check.compare(out, ref, 1e-4, 1e-4)
        self.assertTrue(ok)
        self.assertAlmostEqual(facts["max_abs_err"], 5e-5, delta=1e-6)
        self.assertAlmostEqual(facts["max_rel_err"], 5e-5, delta=1e-6)
        self.assertEqual(facts["bad_elements"], 0)

    def test_the_account_counts_what_allclose_judged(self):
        # Elements a hair either side of atol + rtol * |ref|: the account's bad elements are
        # exactly those isclose calls bad (float32; half and bfloat16 are counted in float32).
        for dtype in (torch.float32,):
            torch.manual_seed(1)
            ref = torch.randn(4096).to(dtype)
            bound = 1e-2 + 1e-2 * ref.float().abs()
            step = torch.where(torch.rand(4096) < 0.5, 0.999, 1.001)
            out = (ref.float() + bound * step).to(dtype)
            ok, facts = check.compare(out, ref, 1e-2, 1e-2)
            expected = int((~torch.isclose(out, ref, rtol=1e-2, atol=1e-2)).sum())
            self.assertGreater(expected, 0)
            self.assertFalse(ok)
            self.assertEqual(facts["bad_elements"], expected, dtype)
            first = int((~torch.isclose(out, ref, rtol=1e-2, atol=1e-2)).nonzero()[0])
            self.assertEqual(facts["first_bad_index"], [first], dtype)


class PerturberTest(unittest.TestCase):
    def test_large_inputs_are_rewritten_in_rows_alike_on_both_sides(self):
        base = [torch.randn(5, 1001), torch.randn(3)]
        with mock.patch.object(common, "PERTURB_PERIOD", 256):
            p = common.Perturber(base, seed=12345)
            self.assertEqual(p.noise[0].numel(), 256 + common.PERTURB_SPAN)
            bufs = [torch.empty_like(x) for x in base]
            for index in (1, 2, 99):
                p.apply(bufs, index)
                want = p.inputs(index)
                for b, w, x in zip(bufs, want, base):
                    self.assertTrue(torch.equal(b, w))
                    ratio = w / x
                    self.assertTrue(bool(((ratio > 1 - common.PERTURB_EPS - 1e-6)
                                          & (ratio <= 1.0 + 1e-6)).all()))
            self.assertFalse(torch.equal(p.inputs(1)[0], p.inputs(2)[0]))


class JudgeMemoryTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kforge-judge-test.")
        self.judges = []
        # Three problems whose models take 1 MiB each (a 512 x 512 linear layer, fp32).
        self.paths = []
        for i in range(3):
            path = os.path.join(self.dir, "p%d.py" % i)
            with open(path, "w") as f:
                f.write(PROBLEM % 512)
            self.paths.append(path)

    def tearDown(self):
        for j in self.judges:  # their shared-buffer files and folders under /dev/shm
            j.problem_slots_released()
            shutil.rmtree(j.shm_dir, ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def judge(self, budget):
        with mock.patch.dict(os.environ, {"KFORGE_DEVICE_MEMORY_BUDGET": str(budget)}):
            j = judge.Judge(chan=None)
            self.assertTrue(j.op_hello({"device": "cpu"})["ok"])
        self.judges.append(j)
        return j

    def load(self, j, i):
        return j.op_load_problem({"id": "p%d" % i, "path": self.paths[i], "init_seed": 100 + i})

    def test_models_over_an_eighth_of_the_budget_are_set_aside_and_come_back_alike(self):
        j = self.judge(20 << 20)  # an eighth is 2.5 MiB: two 1 MiB models, not three
        weights = self.load(j, 0) and j.problems["p0"].model.lin.weight.clone()
        self.load(j, 1)
        self.load(j, 2)
        self.assertEqual(sorted(j.problems), ["p1", "p2"])
        self.assertIn("p0", j.dormant)
        p0 = j.problem("p0")  # loaded again from its seed
        self.assertTrue(torch.equal(p0.model.lin.weight, weights))
        self.assertNotIn("p0", j.dormant)
        self.assertEqual(len(j.problems), 2)

    def test_a_big_slot_keeps_only_its_buffers_and_a_small_one_its_copies(self):
        j = self.judge(512 << 10)  # 1/64 of 512 KiB is 8 KiB: a 4 x 512 slot's 16 KiB is over
        self.load(j, 0)
        prep = j.op_prepare({"problem": "p0", "slot": "main", "seed": 7})
        self.assertTrue(prep["ok"])
        slot = j.problems["p0"].slots["main"]
        self.assertIsNone(slot.kept)
        # The candidate's answer, written into the output buffer, checks against a redraw.
        inputs = j.problems["p0"].inputs_of(slot.recipe)
        slot.out_bufs[0].copy_(j.problems["p0"].reference(inputs)[0])
        tol = {"float32": 1e-4}
        self.assertTrue(j.op_check({"problem": "p0", "slot": "main", "atol": tol,
                                    "rtol": tol})["pass"])

        big = self.judge(1 << 30)
        self.load(big, 0)
        big.op_prepare({"problem": "p0", "slot": "main", "seed": 7})
        self.assertIsNotNone(big.problems["p0"].slots["main"].kept)

    def test_the_empty_call_returns_outputs_like_the_references_when_asked(self):
        # The wall-clock bound's calibration on the CPU (src/execute/lane.cc, NoopCost): an
        # honest candidate's outputs are released outside its timer, so the empty call the gap
        # is measured against returns outputs of the reference's shapes and dtypes too.
        j = self.judge(1 << 30)
        self.load(j, 0)
        self.assertTrue(j.op_prepare({"problem": "p0", "slot": "main", "seed": 7})["ok"])
        returned = []

        class Native:
            def run_batch(self, fn, arg_sets, first, iters, flush, cuda, before, delay_us):
                for i in range(iters):
                    returned.append(fn(*arg_sets[i % len(arg_sets)]))
                return [0.01] * iters, [0.02] * iters, [None], [0.0] * iters, 0

        msg = {"op": "time", "problem": "p0", "mode": "noop", "slots": ["main"], "first": 0,
               "iters": 3}
        with mock.patch.object(judge, "native", Native()):
            self.assertTrue(j.op_time(dict(msg, outputs=True))["ok"])
            with_outputs, returned[:] = list(returned), []
            self.assertTrue(j.op_time(msg)["ok"])
        ref = j.problems["p0"].slots["main"].out_bufs[0]
        self.assertEqual(len(with_outputs), 3)
        for outs in with_outputs:
            self.assertEqual([(o.shape, o.dtype) for o in outs], [(ref.shape, ref.dtype)])
            self.assertNotEqual(outs[0].data_ptr(), ref.data_ptr())  # fresh memory each call
        self.assertEqual(returned, [None, None, None])


if __name__ == "__main__":
    unittest.main()
