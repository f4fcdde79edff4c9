"""Tests for kforge_runner.guard's profile(): the aten ops a forward call ran at the outermost
level, which the runtime rules (src/execute/runtime_rules.cc) judge. Run with
/usr/bin/python3 -m unittest discover -s tests/runner (needs torch)."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from kforge_runner import guard  # noqa: E402


# PyTorch 1.x's Kineto links an op to its parent by rounded timestamps; on the CPU machine it
# left aten::mm and aten::clamp_min outermost in about half the runs (2026-12-01, also when
# idle), so Kineto's answer is only checked on PyTorch 2 (the GPU machine). kforge's default
# there and here is the legacy profiler, which these tests always check.
KINETO_NESTING_UNRELIABLE = int(torch.__version__.split(".")[0]) < 2
KINETO_WHY = "Kineto's op nesting is unreliable on PyTorch 1.x (KFORGE_PROFILER=kineto)"


def forward(x, w):
    # linear runs addmm (or mm) inside itself: only aten::linear is outermost.
    return torch.relu(F.linear(x, w)) * 2


class ProfileTest(unittest.TestCase):
    def setUp(self):
        self.saved = guard.PROFILER
        self.x = torch.randn(8, 16)
        self.w = torch.randn(4, 16)

    def tearDown(self):
        guard.PROFILER = self.saved

    def facts(self, profiler):
        guard.PROFILER = profiler
        out, facts = guard.profile(lambda: forward(self.x, self.w), False)
        self.assertTrue(torch.equal(out, forward(self.x, self.w)))
        return facts

    def test_legacy_is_the_default_where_torch_has_it(self):
        if guard._profiler_legacy is not None and not os.environ.get("KFORGE_PROFILER"):
            self.assertEqual(guard.PROFILER, "legacy")

    def test_outermost_ops_only(self):
        for profiler in ("legacy", "kineto"):
            if profiler == "legacy" and guard._profiler_legacy is None:
                continue
            if profiler == "kineto" and KINETO_NESTING_UNRELIABLE:
                continue
            with self.subTest(profiler=profiler):
                aten = self.facts(profiler)["aten"]
                self.assertIn("aten::linear", aten)
                self.assertIn("aten::relu", aten)
                self.assertIn("aten::mul", aten)
                self.assertNotIn("aten::addmm", aten)
                self.assertNotIn("aten::mm", aten)

    def test_both_profilers_agree(self):
        """On everything the runtime rules judge: the compute ops. Plumbing ops a few
        microseconds long (aten::resolve_conj inside the linear's transpose) are sometimes
        placed outermost by Kineto's timestamps and not by the legacy profiler (seen in CI); the
        allowlist admits them under every policy, so they change no verdict."""
        if guard._profiler_legacy is None:
            self.skipTest("this PyTorch has no legacy profiler")
        if KINETO_NESTING_UNRELIABLE:
            self.skipTest(KINETO_WHY)
        with open(os.path.join(HERE, "..", "..", "runner", "policies",
                               "strict_allowed_aten.txt")) as f:
            plumbing = {line.split("#")[0].strip() for line in f} - {""}

        def judged(facts):
            return dict(facts, aten=[op for op in facts["aten"] if op not in plumbing])
        self.assertEqual(judged(self.facts("legacy")), judged(self.facts("kineto")))

    def test_a_call_with_no_aten_ops(self):
        guard.PROFILER = "legacy" if guard._profiler_legacy is not None else "kineto"
        out, facts = guard.profile(lambda: 7, False)
        self.assertEqual(out, 7)
        self.assertEqual(facts["aten"], [])


class FakeExtension:
    """An extension with the two calling conventions model-written kernels use."""

    def __init__(self):
        self.writes = 0

    def relu_out(self, x, out):  # writes its answer into a tensor it is handed
        self.writes += 1
        out.copy_(torch.relu(x))

    def relu(self, x):  # returns its answer
        return torch.relu(x)


class AblationTest(unittest.TestCase):
    def setUp(self):
        self.ext = FakeExtension()
        self.state = {"calls": 0, "ablate": False}
        self.proxy = guard.ExtensionProxy(self.ext, self.state)
        self.x = torch.randn(64)

    def test_a_function_that_returns_nothing_is_skipped(self):
        out = torch.full((64,), 7.0)
        self.assertIsNone(self.proxy.relu_out(self.x, out))
        self.assertTrue(torch.equal(out, torch.relu(self.x)))
        self.state["ablate"] = True
        poison = torch.full((64,), 7.0)
        self.assertIsNone(self.proxy.relu_out(self.x, poison))
        # Not called: what it writes stays what was there (the allocator's poison), so an
        # honest out-parameter kernel makes the ablated answer wrong (before, it ran and the
        # answer stayed right: a false H02).
        self.assertEqual(self.ext.writes, 1)
        self.assertTrue(torch.equal(poison, torch.full((64,), 7.0)))
        self.assertEqual(self.state["calls"], 2)

    def test_tensor_results_come_back_as_nan(self):
        self.assertTrue(torch.equal(self.proxy.relu(self.x), torch.relu(self.x)))
        self.state["ablate"] = True
        self.assertTrue(torch.isnan(self.proxy.relu(self.x)).all())

    def test_never_seen_returning_nothing_is_called(self):
        # Only what earlier calls showed is skipped: a first call in ablation mode runs.
        self.state["ablate"] = True
        out = torch.zeros(64)
        self.proxy.relu_out(self.x, out)
        self.assertEqual(self.ext.writes, 1)


if __name__ == "__main__":
    unittest.main()
