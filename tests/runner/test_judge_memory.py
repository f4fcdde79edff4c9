"""Tests for the judge's memory model (runner/kforge_runner/judge.py, slots.py and check.py;
docs/PROTOCOL.md "Memory") on the CPU: comparisons in chunks agree with one pass, the timed-input rewrite of a large input
is the same in the candidate and the judge, big slots keep no copies, and loaded problems'
models are set aside under a memory budget and come back with the same weights; a big
problem's requests peak at a slot's buffers, a draw and the reference's outputs, and its
slots are handed back by phase, by the judge and by the candidate host.
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

from kforge_runner import candidate, check, common, judge  # noqa: E402

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

    def test_the_judges_own_redraw_is_rewritten_where_it_lies(self):
        base = [torch.randn(5, 1001), torch.randn(3, 4).t(), 7]  # one not contiguous
        with mock.patch.object(common, "PERTURB_PERIOD", 256):
            want = common.Perturber([x.clone() if torch.is_tensor(x) else x for x in base],
                                    seed=99).inputs(3)
            got = common.Perturber(base, seed=99).inputs(3, in_place=True)
        self.assertIs(got[0], base[0])  # no copy of a contiguous input
        self.assertIsNot(got[1], base[1])
        self.assertEqual(got[2], 7)
        for g, w in zip(got[:2], want[:2]):
            self.assertTrue(torch.equal(g, w))


class PerturberContractTest(unittest.TestCase):
    """Timed calls' fresh inputs stay inside the input's contract (PROTOCOL.md, "timing"),
    exactly, and alike on both sides (the candidate's buffers, the judge's redraw)."""

    @staticmethod
    def rewritten(base, index, seed=7):
        bufs = [x.clone() for x in base]  # the shared buffers hold the pristine inputs
        common.Perturber(base, seed).apply(bufs, index)
        again = common.Perturber([x.clone() for x in base], seed).inputs(index, in_place=True)
        for b, a in zip(bufs, again):
            assert torch.equal(b, a), "the judge's redraw differs from the candidate's inputs"
        return bufs

    def assert_fresh(self, x, a, b):
        self.assertFalse(torch.equal(a, x))
        self.assertFalse(torch.equal(a, b))

    def test_symmetric_inputs_stay_exactly_symmetric(self):
        r = torch.randn(3, 40, 40)
        x = (r + r.transpose(-1, -2)) / 2
        a, = self.rewritten([x], 1)
        b, = self.rewritten([x], 2)
        self.assertTrue(torch.equal(a, a.transpose(-1, -2)))
        self.assert_fresh(x, a, b)
        ratio = a / x
        self.assertTrue(bool(((ratio > 1 - common.PERTURB_EPS - 1e-6) & (ratio <= 1 + 1e-6)).all()))

    def test_sorted_rows_stay_sorted(self):
        up = torch.sort(torch.randn(6, 500), dim=-1).values
        down = torch.sort(torch.rand(4, 3, 300), dim=-1, descending=True).values
        a_up, a_down = self.rewritten([up, down], 1)
        b_up, b_down = self.rewritten([up, down], 2)
        self.assertTrue(bool((a_up[..., 1:] >= a_up[..., :-1]).all()))
        self.assertTrue(bool((a_down[..., 1:] <= a_down[..., :-1]).all()))
        self.assert_fresh(up, a_up, b_up)
        self.assert_fresh(down, a_down, b_down)

    def test_rows_summing_to_one_keep_their_values_and_sums(self):
        p = torch.softmax(torch.randn(8, 64), dim=-1)
        a, = self.rewritten([p], 1)
        b, = self.rewritten([p], 2)
        self.assert_fresh(p, a, b)
        self.assertTrue(torch.equal(torch.sort(a, -1).values, torch.sort(p, -1).values))
        self.assertTrue(bool(((a.sum(-1) - 1).abs() < 1e-5).all()))

    def test_whole_values_and_probability_rows_with_zeros_are_not_rewritten(self):
        whole = torch.randint(0, 10, (50, 7)).float()
        masked = torch.softmax(torch.randn(4, 16), -1) * (torch.arange(16) % 2)
        masked = masked / masked.sum(-1, keepdim=True)
        plain = torch.randn(30)
        a = self.rewritten([whole, masked, plain], 3)
        self.assertTrue(torch.equal(a[0], whole))
        self.assertTrue(torch.equal(a[1], masked))
        self.assertFalse(torch.equal(a[2], plain))  # the rest still changes

    def test_signs_zeros_and_unit_ranges_are_kept_elementwise(self):
        x = torch.tril(torch.rand(32, 32))
        a, = self.rewritten([x], 4)
        self.assertTrue(torch.equal(a == 0, x == 0))
        self.assertTrue(bool(((a >= 0) & (a < 1)).all()))
        self.assertFalse(torch.equal(a, x))


class FiniteTest(unittest.TestCase):
    def test_chunks_see_a_nan_anywhere(self):
        x = torch.zeros(1000)
        self.assertTrue(check.finite([x], chunk=64))
        x[999] = float("inf")
        self.assertFalse(check.finite([x], chunk=64))
        self.assertTrue(check.finite([torch.arange(5)], chunk=2))  # integers are finite


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


MIB = 1 << 20
# KernelBench's 19_ReLU (6 GiB in, 6 GiB out) on an 80 GiB GPU, scaled down: T = 32 MiB in and
# out, a budget of 20 T.
BIG = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn(2048, 4096)]

def get_init_inputs():
    return []
'''


class BigProblemTest(unittest.TestCase):
    T = 32 * MIB
    TOL = {"float32": 1e-4}

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kforge-judge-test.")
        self.path = os.path.join(self.dir, "big.py")
        with open(self.path, "w") as f:
            f.write(BIG)
        with mock.patch.dict(os.environ, {"KFORGE_DEVICE_MEMORY_BUDGET": str(20 * self.T)}):
            self.j = judge.Judge(chan=None)
            self.assertTrue(self.j.op_hello({"device": "cpu"})["ok"])
        if not self.j.memory.resettable:
            self.skipTest("this Linux does not let a process reset its resident set's peak")

    def tearDown(self):
        self.j.problem_slots_released()
        shutil.rmtree(self.j.shm_dir, ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def request(self, op, msg):
        """The reply and the request's peak, as the judge's loop measures it."""
        m = self.j.memory
        m.begin()
        reply = getattr(self.j, "op_" + op)(dict(msg, problem="big"))
        return reply, m.end()

    def answer(self, slot):
        """What an honest candidate writes."""
        torch.clamp(slot.in_bufs[0], min=0, out=slot.out_bufs[0])

    def test_a_request_peaks_at_a_slot_a_draw_and_the_outputs_and_phases_hand_slots_back(self):
        reply, _ = self.request("load_problem", {"id": "big", "path": self.path, "init_seed": 1})
        self.assertTrue(reply["ok"])
        # 4T and what the judge started with beside it; a check adds the comparison's chunks
        # (1M elements with this budget: up to 12 float32 temporaries, 48 MiB) and, for timed
        # outputs, the fresh-input noise (4M factors). Copies of the draw for the reference and
        # of its outputs took 6T, one chunk of 16M elements 4 such temporaries of T.
        bound = 4 * self.T + 12 * MIB
        for seed in (7, 8):
            reply, peak = self.request("prepare", {"slot": "main", "seed": seed})
            self.assertLessEqual(peak, bound, "prepare %d" % seed)
        slot = self.j.problems["big"].slots["main"]
        self.assertIsNone(slot.kept)
        self.answer(slot)
        reply, peak = self.request("check", {"slot": "main", "atol": self.TOL, "rtol": self.TOL})
        self.assertTrue(reply["pass"], reply)
        self.assertLessEqual(peak, bound + 48 * MIB, "check")
        reply, peak = self.request("prepare", {"slot": "main", "seed": 9, "signed": True})
        self.assertIn("slot", reply)
        self.assertLessEqual(peak, bound, "the signed trial's prepare")

        # The next phase: the correctness slot goes back, its file with it.
        main_file = slot.in_descs[0]["tensor"]["path"]
        held = self.j.memory.now()
        self.request("release_slots", {"keep": ["T0"]})
        self.assertEqual(self.j.problems["big"].slots, {})
        self.assertFalse(os.path.exists(main_file))
        self.assertLessEqual(self.j.memory.now(), held - 2 * self.T + 4 * MIB)

        # Timed outputs: the candidate rewrote its inputs from its own copy; the judge rewrites
        # its redraw where it lies (it made a second one: 5T).
        reply, peak = self.request("prepare", {"slot": "T0", "seed": 11})
        self.assertLessEqual(peak, bound, "a timing set's prepare")
        t0 = self.j.problems["big"].slots["T0"]
        common.Perturber([t0.in_bufs[0].clone()], 5).apply(t0.in_bufs, 3)
        self.answer(t0)
        reply, peak = self.request("check", {"slot": "T0", "atol": self.TOL, "rtol": self.TOL,
                                             "perturb": {"seed": 5, "index": 3}})
        self.assertTrue(reply["pass"], reply)
        # The check redraws the timed call's inputs with the fresh-input noise beside them: a
        # float32 factor an element up to PERTURB_PERIOD, and the window's span (16.25 MiB here;
        # without it the bound held only by the 12 MiB of slack, and a CI run read 3 MiB over).
        noise = 4 * (min(self.T // 4, common.PERTURB_PERIOD) + common.PERTURB_SPAN)
        self.assertLessEqual(peak, bound + 48 * MIB + noise, "the timed outputs' check")

    def test_a_request_past_the_budget_fails_as_an_out_of_memory(self):
        m = self.j.memory
        m.begin()
        x = torch.ones(21 * self.T // 4)
        with self.assertRaisesRegex(MemoryError, "memory budget"):
            m.end()
        del x
        m.begin()
        self.assertLess(m.end(), self.T)


class CandidateReleaseTest(unittest.TestCase):
    def test_the_host_lets_go_of_every_slot_but_those_kept(self):
        host = candidate.Host(chan=None, spawn={"device": "cpu"})
        for name in ("main", "shape0", "T0"):
            host.opened[name] = ({}, [torch.zeros(4)], [torch.zeros(4)])
            host.perturbers[name] = object()
            host.timed_last[name] = [torch.zeros(4)]
        self.assertEqual(host.op_release({"keep": ["T0"]}), {"ok": True})
        for held in (host.opened, host.perturbers, host.timed_last):
            self.assertEqual(list(held), ["T0"])
        host.op_release({"keep": []})
        self.assertEqual(host.opened, {})

    def test_a_batch_lets_go_of_the_last_outputs_of_the_sets_it_calls_only(self):
        host = candidate.Host(chan=None, spawn={"device": "cpu"})
        host.model = lambda x: x + 1
        names = ["T0", "T1", "T2"]
        seen = []

        def run_batch(fn, sets, first, iters, flush, cuda, before, delay_us):
            seen.append(sorted(host.timed_last))
            last = [None] * len(sets)
            for k in range(iters):
                last[(first + k) % len(sets)] = fn(*sets[(first + k) % len(sets)])
            return [0.1] * iters, [0.1] * iters, last, [0.0] * iters, 0

        host.run_batch = run_batch
        slot = {"inputs": [{"value": 1}], "outputs": []}
        msg = {"slots": names, "buffers": [slot] * 3}
        host.op_time(dict(msg, first=0, iters=3))
        self.assertEqual(sorted(host.timed_last), names)
        host.op_time(dict(msg, first=3, iters=1))  # calls T0 alone
        self.assertEqual(seen[-1], ["T1", "T2"])
        self.assertEqual(sorted(host.timed_last), names)  # the emit after timing needs them all


if __name__ == "__main__":
    unittest.main()
