"""examples/rl/mirrorpop.py against the vectors src/score/mirrorpop_test.cc checks too."""
import json
import math
import os
import sys
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "examples", "rl"))
import mirrorpop  # noqa: E402


def num(x):
    return float(x)  # numbers, and the strings "inf", "-inf", "nan"


def tensor(rows):
    return torch.tensor([[num(x) for x in r] for r in rows], dtype=torch.float64)


with open(os.path.join(HERE, "mirrorpop_vectors.json")) as f:
    CASES = json.load(f)["cases"]


class SharedVectors(unittest.TestCase):
    def test_vectors(self):
        self.assertGreaterEqual(len(CASES), 8)
        for c in CASES:
            with self.subTest(c["name"]):
                lt, lr = tensor(c["logp_trainer"]), tensor(c["logp_rollout"])
                mask = torch.tensor(c["mask"])
                if c.get("error"):
                    with self.assertRaises(ValueError):
                        mirrorpop.keep_mask(lt, lr, mask, num(c["delta"]))
                    continue
                means = mirrorpop.mean_abs_log_ratio(lt, lr, mask)
                keep = mirrorpop.keep_mask(lt, lr, mask, num(c["delta"]))
                self.assertEqual(keep.dtype, torch.bool)
                self.assertEqual(keep.tolist(), c["keep"])
                for got, want in zip(means.tolist(), map(num, c["mean_abs_log_ratio"])):
                    if math.isnan(want):
                        self.assertTrue(math.isnan(got))
                    elif math.isinf(want):
                        self.assertEqual(got, want)
                    else:
                        self.assertAlmostEqual(got, want, delta=1e-12)

    def test_same_answer_for_float32_and_bool_mask(self):
        c = CASES[2]  # the length-invariance case: binary fractions, exact in float32 too
        lt = tensor(c["logp_trainer"]).float()
        lr = tensor(c["logp_rollout"]).float()
        mask = torch.tensor(c["mask"]).bool()
        self.assertEqual(mirrorpop.keep_mask(lt, lr, mask, c["delta"]).tolist(), c["keep"])

    def test_token_mask_turns_off_dropped_sequences(self):
        lt = torch.tensor([[-1.0, -1.0, 0.0], [-1.0, -1.0, 0.0]])
        lr = torch.tensor([[-1.0, -1.0, -5.0], [-3.0, -1.0, -5.0]])
        mask = torch.tensor([[1, 1, 0], [1, 1, 0]])
        tm = mirrorpop.token_mask(lt, lr, mask, 0.5)
        self.assertEqual(tm.tolist(), [[True, True, False], [False, False, False]])


class BadInput(unittest.TestCase):
    def test_refused(self):
        t = torch.zeros(2, 3)
        m = torch.ones(2, 3, dtype=torch.bool)
        with self.assertRaises(ValueError):
            mirrorpop.keep_mask(t, torch.zeros(2, 4), torch.ones(2, 4, dtype=torch.bool), 0.1)
        with self.assertRaises(ValueError):
            mirrorpop.keep_mask(torch.zeros(6), torch.zeros(6), torch.ones(6), 0.1)
        with self.assertRaises(ValueError):
            mirrorpop.keep_mask(t, t, m, float("nan"))
        with self.assertRaises(ValueError):
            mirrorpop.keep_mask(t, t, m, -1)
        with self.assertRaises(TypeError):
            mirrorpop.keep_mask(t, t, m.float(), 0.1)  # a float mask is ambiguous
        with self.assertRaises(TypeError):
            mirrorpop.keep_mask([[0.0]], [[0.0]], [[1]], 0.1)


if __name__ == "__main__":
    unittest.main()
