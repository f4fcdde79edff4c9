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


if __name__ == "__main__":
    unittest.main()
