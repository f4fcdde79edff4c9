"""Tests for models that keep state between calls (runner/kforge_runner/state.py): the judge
finds a stateful problem at its load and starts every call of it from the state it was built
with; a model whose state changes without changing its outputs (batch norm's running
statistics), one whose outputs vary by themselves (dropout) and a plain one are left as they are.
Run with /usr/bin/python3 -m unittest discover -s tests/runner (needs torch)."""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

import torch  # noqa: E402

from kforge_runner import judge, problem, state  # noqa: E402

HEADER = '''
import torch
import torch.nn as nn

def get_inputs():
    return [torch.randn(4, 8)]

def get_init_inputs():
    return []
'''

STATEFUL = '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.randn(4, 8)
        self.lin = nn.Linear(16, 8)

    def forward(self, x):
        self.hidden = torch.tanh(self.lin(torch.cat((x, self.hidden), dim=1)))
        return self.hidden * 2
'''

BATCH_NORM = '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(x)
'''

DROPOUT = '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x)
'''

PLAIN = '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((8,), 3.0))

    def forward(self, x):
        return x * self.scale
'''


class StatefulProblemTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kforge-state-test.")
        self.j = judge.Judge(chan=None)
        self.assertTrue(self.j.op_hello({"device": "cpu"})["ok"])

    def tearDown(self):
        self.j.problem_slots_released()
        shutil.rmtree(self.j.shm_dir, ignore_errors=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def load(self, model):
        path = os.path.join(self.dir, "p%d.py" % len(os.listdir(self.dir)))
        with open(path, "w") as f:
            f.write(HEADER + model)
        pid = os.path.basename(path)
        reply = self.j.op_load_problem({"id": pid, "path": path, "init_seed": 7})
        self.assertTrue(reply["ok"])
        return reply, self.j.problems[pid]

    def test_a_hidden_state_is_found_and_every_call_starts_from_it(self):
        reply, p = self.load(STATEFUL)
        self.assertEqual(reply["stateful"], ["hidden"])
        x = p.draw(3, False)
        first = p.reference(x)
        for _ in range(3):  # the judge's own calls no longer move it
            self.assertTrue(torch.equal(p.reference(x)[0], first[0]))
        # ... and the state is the one it was built with: a fresh model's first call agrees.
        torch.manual_seed(7)
        fresh = p.module.Model()
        with torch.no_grad():
            self.assertTrue(torch.equal(fresh(*[t.clone() for t in x]), first[0]))

    def test_the_finding_survives_a_reload(self):
        reply, p = self.load(STATEFUL)
        self.assertEqual(p.msg["stateful"], ["hidden"])
        q = problem.Problem(p.msg, "cpu", self.j.exporter, self.j.memory)
        x = q.draw(3, False)
        self.assertTrue(torch.equal(q.reference(x)[0], q.reference(x)[0]))

    def test_state_that_does_not_change_outputs_is_left_alone(self):
        for model in (BATCH_NORM, DROPOUT, PLAIN):
            reply, p = self.load(model)
            self.assertNotIn("stateful", reply, model)
            self.assertEqual(p.stateful, [], model)
        # batch norm's running statistics still move, as they would without kforge
        reply, p = self.load(BATCH_NORM)
        before = p.model.bn.running_mean.clone()
        p.reference(p.draw(3, False))
        self.assertFalse(torch.equal(before, p.model.bn.running_mean))

    def test_the_candidate_side_puts_back_its_own_tensors(self):
        torch.manual_seed(1)
        namespace = {"torch": torch, "nn": torch.nn}
        exec(HEADER + STATEFUL, namespace)
        model = namespace["Model"]()
        state.keep_initial_state(model, state.snapshot(model))
        x = torch.randn(4, 8)
        with torch.no_grad():
            a, b = model(x), model(x)
        self.assertTrue(torch.equal(a, b))

    def test_fingerprints_tell_outputs_apart(self):
        x = torch.randn(16, 16)
        y = x.clone()
        y[3, 5] += 1e-3
        self.assertEqual(state.fingerprint([x]), state.fingerprint([x.clone()]))
        self.assertNotEqual(state.fingerprint([x]), state.fingerprint([y]))
        self.assertEqual(state.fingerprint([torch.arange(5)]),
                         state.fingerprint([torch.arange(5)]))


if __name__ == "__main__":
    unittest.main()
