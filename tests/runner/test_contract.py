"""Tests for the input contract (runner/kforge_runner/contract.py) and the judge's perturbed
trials inside it (docs/PROTOCOL.md, "correctness"): invariants inferred from seeded draws, the
signed trial signing only what may be signed (skipped when nothing may), swapped trials that
keep every invariant and still change the values (H06).
Run with /usr/bin/python3 -m unittest discover -s tests/runner (needs torch)."""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

import torch  # noqa: E402

from kforge_runner import contract, judge, problem  # noqa: E402


def draws(make, n=4):
    out = []
    for s in range(n):
        torch.manual_seed(100 + s)
        out.append(make())
    return out


def sym(n):
    a = torch.randn(n, n)
    return (a + a.T) / 2


CASES = {
    # name: (get_inputs, the invariants expected on input 0 (key: value), may be signed)
    "tril": (lambda: [torch.tril(torch.randn(48, 48))], {"triangular": "lower", "zero_mask": True}, True),
    "triu_rand": (lambda: [torch.triu(torch.rand(48, 48))],
                  {"triangular": "upper", "zero_mask": True, "nonnegative": True, "unit": True}, False),
    "rand": (lambda: [torch.rand(4, 5000)], {"nonnegative": True, "unit": True, "unit_open": True}, False),
    "randn": (lambda: [torch.randn(16, 32)], {}, True),
    "symmetric": (lambda: [sym(40)], {"symmetric": True}, True),
    "softmax": (lambda: [torch.softmax(torch.randn(10, 20), -1)], {"row_sum_one": True}, False),
    "sorted": (lambda: [torch.sort(torch.randn(10, 20), -1).values], {"sorted": "ascending"}, True),
    "targets": (lambda: [torch.randint(0, 5, (64,))], {"range": [0, 4], "integral": True}, False),
    "relu": (lambda: [torch.relu(torch.randn(64, 64))], {"nonnegative": True}, False),
    "int_valued": (lambda: [torch.randint(-3, 4, (10, 10)).float()], {"integral": True}, False),
}

# Keys whose presence says an invariant holds (absent: it does not).
FLAGS = ("nonnegative", "unit", "unit_open", "integral", "zero_mask", "triangular", "symmetric",
         "row_sum_one", "sorted")


class InferenceTest(unittest.TestCase):
    def test_each_invariant_is_found_and_no_other_structural_one(self):
        for name, (make, want, signable) in CASES.items():
            with self.subTest(name):
                c = contract.infer(draws(make))[0]
                for k, v in want.items():
                    self.assertEqual(c.get(k), v, (name, c))
                for k in ("zero_mask", "triangular", "symmetric", "row_sum_one", "sorted"):
                    if k not in want:
                        self.assertNotIn(k, c, (name, c))
                self.assertEqual(contract.can_sign(c), signable, (name, c))

    def test_chance_zeros_are_no_pattern(self):
        # relu of random values: half zeros, never the same ones.
        c = contract.infer(draws(lambda: [torch.relu(torch.randn(32, 32))]))[0]
        self.assertNotIn("zero_mask", c)

    def test_non_tensor_inputs_have_no_contract(self):
        c = contract.infer(draws(lambda: [torch.randn(3, 3), 7]))
        self.assertIsNone(c[1])
        self.assertIn("not a tensor", contract.describe(c[1]))

    def test_a_big_input_is_looked_at_on_a_sample(self):
        old = contract.SAMPLE_ELEMENTS
        contract.SAMPLE_ELEMENTS = 1 << 12
        try:
            x = torch.tril(torch.rand(512, 512))
            sub, rows, _ = contract.sample(x)
            self.assertLessEqual(sub.numel(), 1 << 12)
            c = contract.infer([[torch.tril(torch.rand(512, 512))] for _ in range(3)])[0]
            self.assertEqual(c.get("triangular"), "lower")
            self.assertTrue(c.get("unit"))
        finally:
            contract.SAMPLE_ELEMENTS = old


class PerturbationTest(unittest.TestCase):
    def test_swaps_and_signs_stay_inside_every_contract_and_swaps_change_values(self):
        for name, (make, want, signable) in CASES.items():
            with self.subTest(name):
                c = contract.infer(draws(make))
                torch.manual_seed(999)
                x = make()
                swapped = contract.swap_some(x, 12345, c)
                got = [contract.infer([x, swapped])[0]]
                s = contract.signed(x, c)
                self.assertEqual(s is not None, signable, name)
                if s is not None:
                    got.append(contract.infer([x, s])[0])
                    self.assertTrue(bool((s[0] < 0).any()), name)
                for g in got:
                    for k in FLAGS:
                        if k in c[0] and k != "unit_open":
                            self.assertEqual(g.get(k), c[0][k], (name, k, g))
                if "sorted" not in c[0]:  # no swap keeps an order: a sorted input is left alone
                    self.assertFalse(torch.equal(swapped[0], x[0]), name)
                    # a permutation of the values: same multiset
                    self.assertTrue(torch.equal(torch.sort(swapped[0].reshape(-1)).values,
                                                torch.sort(x[0].reshape(-1)).values), name)

    def test_in_place_trials_are_the_same_trials(self):
        # lint-problems makes them in place (one copy of a large input); the judge does not.
        for name, (make, _, signable) in CASES.items():
            with self.subTest(name):
                c = contract.infer(draws(make))
                torch.manual_seed(31)
                a = contract.swap_some(make(), 9, c)
                torch.manual_seed(31)
                x = make()
                b = contract.swap_some(x, 9, c, in_place=True)
                self.assertTrue(torch.equal(a[0], b[0]), name)
                if x[0].is_contiguous():
                    self.assertIs(b[0], x[0])
                if signable:
                    torch.manual_seed(32)
                    a = contract.signed(make(), c)
                    torch.manual_seed(32)
                    b = contract.signed(make(), c, in_place=True)
                    self.assertTrue(torch.equal(a[0], b[0]), name)

    def test_without_a_contract_any_pairs_swap(self):
        x = [torch.tril(torch.randn(32, 32))]
        y = contract.swap_some(x, 5, None)
        self.assertFalse(torch.equal(x[0], y[0]))


class OutsideTest(unittest.TestCase):
    """contract.outside, the check `kforge lint-problems` runs on every trial's inputs."""

    def test_each_case_is_inside_its_own_contract(self):
        for name, (make, _, _) in CASES.items():
            with self.subTest(name):
                c = contract.infer(draws(make))[0]
                torch.manual_seed(555)
                x = make()[0]
                self.assertEqual(contract.outside(c, x, x), [], name)

    def test_a_broken_invariant_is_named(self):
        broken = {
            # case: (what breaks it, the name it must be reported under)
            "tril": (lambda x: x + torch.triu(torch.ones_like(x), 1), "lower-triangular"),
            "rand": (lambda x: x - 0.5, "non-negative"),
            "relu": (lambda x: -x - 1, "non-negative"),
            "symmetric": (lambda x: x * torch.rand_like(x), "symmetric"),
            "softmax": (lambda x: x * 0.9, "rows sum to 1"),
            "sorted": (lambda x: x.flip(-1), "sorted ascending"),
            "targets": (lambda x: x + 7, "integer range"),
            "int_valued": (lambda x: x * 0.99, "integral values"),
        }
        for name, (breaker, invariant) in broken.items():
            with self.subTest(name):
                make = CASES[name][0]
                c = contract.infer(draws(make))[0]
                torch.manual_seed(555)
                x = make()[0]
                self.assertIn(invariant, contract.outside(c, breaker(x), x), name)

    def test_a_zero_pattern_moved_is_named(self):
        # A fixed zero pattern that is not triangular: every other column.
        mask = torch.arange(64) % 2 == 0
        make = lambda: [torch.randn(8, 64) * mask]  # noqa: E731
        c = contract.infer(draws(make))[0]
        self.assertTrue(c.get("zero_mask"))
        x = make()[0]
        self.assertEqual(contract.outside(c, x * 0.5, x), [])
        self.assertIn("zero pattern", contract.outside(c, torch.roll(x, 1, -1), x))

    def test_another_shape_or_dtype_is_outside(self):
        c = contract.infer(draws(lambda: [torch.randn(4, 4)]))[0]
        self.assertEqual(contract.outside(c, torch.randn(4, 5)), ["shape and dtype"])
        self.assertEqual(contract.outside(c, torch.randn(4, 4).double()), ["shape and dtype"])

    def test_timed_inputs_stay_inside_every_contract(self):
        # The timed calls' fresh inputs (common.Perturber, verdict format 15) for each case;
        # before format 15 the symmetric, sorted, whole-valued and softmax cases left theirs.
        from kforge_runner.common import Perturber
        for name, (make, _, _) in CASES.items():
            with self.subTest(name):
                c = contract.infer(draws(make))[0]
                torch.manual_seed(777)
                base = make()
                p = Perturber(base, 4242)
                for k in range(6):
                    self.assertEqual(contract.outside(c, p.inputs(k)[0], base[0]), [], (name, k))

    def test_the_format_14_rewrite_of_a_symmetric_input_is_caught(self):
        # What timed calls did before format 15: a factor per element, which breaks symmetry.
        from kforge_runner.common import Perturber
        c = contract.infer(draws(lambda: [sym(40)]))[0]
        base = [sym(40)]
        p = Perturber(base, 1)
        p.modes = ["elements"]
        p.noise = Perturber([torch.randn(40, 40)], 1).noise  # per-element factors
        self.assertIn("symmetric", contract.outside(c, p.inputs(3)[0], base[0]))


PROBLEM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)

def get_inputs():
    return [%s, %s]

def get_init_inputs():
    return []
'''


class JudgeTrialsTest(unittest.TestCase):
    """The judge's prepare: the signed and swapped trials of real problems."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kforge-contract-test.")
        self.j = judge.Judge(chan=None)
        self.assertTrue(self.j.op_hello({"device": "cpu"})["ok"])

    def tearDown(self):
        self.j.problem_slots_released()
        shutil.rmtree(self.j.shm_dir, ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def load(self, a, b):
        path = os.path.join(self.dir, "p%d.py" % len(os.listdir(self.dir)))
        with open(path, "w") as f:
            f.write(PROBLEM % (a, b))
        pid = os.path.basename(path)
        self.assertTrue(self.j.op_load_problem({"id": pid, "path": path, "init_seed": 7})["ok"])
        return pid, self.j.problems[pid]

    def test_triangular_inputs_stay_triangular_in_every_trial(self):
        pid, p = self.load("torch.tril(torch.randn(32, 32))", "torch.tril(torch.randn(32, 32))")
        for recipe in ({"seed": 3, "signed": True}, {"seed": 3, "swap_seed": 11}):
            inputs = p.inputs_of(recipe)
            for x in inputs:
                self.assertTrue(torch.equal(x, torch.tril(x)), recipe)
        self.assertFalse(torch.equal(p.inputs_of({"seed": 3, "swap_seed": 11})[0],
                                     p.inputs_of({"seed": 3})[0]))
        r = self.j.op_prepare({"problem": pid, "slot": "main", "seed": 3, "signed": True})
        self.assertNotIn("skip", r)

    def test_non_negative_inputs_skip_the_signed_trial_and_say_why(self):
        pid, p = self.load("torch.rand(8, 4096)", "torch.rand(4096, 4)")
        r = self.j.op_prepare({"problem": pid, "slot": "main", "seed": 3, "signed": True})
        self.assertIn("non-negative", r["skip"])
        self.assertTrue(all(bool((x >= 0).all()) for x in p.inputs_of({"seed": 3, "swap_seed": 9})))

    def test_only_the_signed_input_is_signed(self):
        pid, p = self.load("torch.randn(8, 64)", "torch.rand(64, 4)")
        a, b = p.inputs_of({"seed": 3, "signed": True})
        self.assertTrue(bool((a < 0).any()))
        self.assertTrue(bool((b >= 0).all()))
        # b keeps the signed trial's own fresh draw: not the seeded draw of another trial
        self.assertFalse(torch.equal(b, p.inputs_of({"seed": 4})[1]))
        self.assertTrue(torch.equal(b, p.inputs_of({"seed": 3})[1]))

    def test_the_contract_survives_a_reload(self):
        pid, p = self.load("torch.rand(8, 64)", "torch.rand(64, 4)")
        self.assertIn("contract", p.msg)
        q = problem.Problem(p.msg, "cpu", self.j.exporter, self.j.memory)
        self.assertEqual(q.contract(), p.contract())


if __name__ == "__main__":
    unittest.main()
