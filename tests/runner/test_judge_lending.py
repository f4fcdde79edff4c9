"""The confined judge of an untrusted problem borrows its shared buffers from the trusted judge
(runner/kforge_runner/judge.py, transport.Borrower; docs/SECURITY.md): on a GPU a CUDA IPC
handle made in the confined judge's pid namespace does not open in the candidate host's, one
made by the trusted judge opens in both. Here, on the CPU, two judges in one process, joined
the way kforge joins them: the confined judge's events answered by the trusted judge's ops.
Run with /usr/bin/python3 -m unittest discover -s tests/runner (needs torch)."""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

from kforge_runner import judge, protocol, transport  # noqa: E402

PROBLEM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x, y):
        return x + y, x * 2

def get_inputs():
    return [torch.randn(8, 16), torch.randn(8, 16)]

def get_init_inputs():
    return []
'''


class Kforge:
    """The confined judge's channel, as kforge's ConfinedRequest answers it: a borrow is the
    trusted judge's lend, a give_back its reclaim; `refuse` makes every borrow fail."""

    def __init__(self, trusted):
        self.trusted = trusted
        self.answers = []
        self.events = []
        self.refuse = None

    def send(self, msg):
        assert msg.get("event") in protocol.SCHEMA["services"]["judge"]["events"], msg
        self.events.append(msg["event"])
        if msg["event"] == "borrow":
            if self.refuse:
                self.answers.append({"ok": False, "message": self.refuse})
                return
            self.answers.append(self.trusted.op_lend({"shape": msg["shape"],
                                                      "dtype": msg["dtype"]}))
        else:
            self.trusted.op_reclaim({"ids": msg["ids"]})
            self.answers.append({"ok": True})

    def recv(self):
        return self.answers.pop(0)


class LendingTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kforge-lending-")
        self.path = os.path.join(self.tmp, "problem.py")
        with open(self.path, "w") as f:
            f.write(PROBLEM)
        self.trusted = judge.Judge(chan=None)
        self.assertTrue(self.trusted.op_hello({"device": "cpu"})["ok"])
        self.kforge = Kforge(self.trusted)
        self.confined = judge.Judge(chan=self.kforge)
        self.confined.borrows = True
        self.assertTrue(self.confined.op_hello({"device": "cpu"})["ok"])
        self.confined.in_op = True  # as while serving a request
        r = self.confined.op_load_problem({"id": "p", "path": self.path, "init_seed": 3})
        self.assertTrue(r["ok"], r)

    def tearDown(self):
        for j in (self.confined, self.trusted):
            for p in j.problems.values():
                p.release()
        self.trusted.op_reclaim({})
        shutil.rmtree(self.trusted.shm_dir, ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_every_buffer_of_a_trial_is_the_trusted_judges(self):
        r = self.confined.op_prepare({"problem": "p", "slot": "main", "seed": 11})
        self.assertTrue(r["ok"], r)
        descs = [d["tensor"] for d in r["slot"]["inputs"]] + r["slot"]["outputs"]
        self.assertEqual(len(descs), 4)  # two inputs, two outputs
        for d in descs:
            self.assertEqual(os.path.dirname(d["path"]), self.trusted.shm_dir)
            self.assertIn(d["lent"], self.trusted.lender.lent)
        self.assertIsNone(self.confined.shm_dir)  # it makes no buffer folder of its own
        self.assertEqual(len(self.trusted.lender.lent), 4)
        # The candidate's view (transport.open_buffer) is the confined judge's buffer.
        slot = self.confined.problems["p"].slots["main"]
        seen = transport.open_buffer(descs[0])
        self.assertTrue(bool((seen == slot.in_bufs[0]).all()))
        seen.fill_(5.0)
        self.assertEqual(float(slot.in_bufs[0][0, 0]), 5.0)

    def test_a_checked_trial_passes_on_borrowed_buffers(self):
        r = self.confined.op_prepare({"problem": "p", "slot": "main", "seed": 11})
        slot = self.confined.problems["p"].slots["main"]
        x, y = slot.in_bufs
        outs = [transport.open_buffer(d) for d in r["slot"]["outputs"]]
        outs[0].copy_(x + y)
        outs[1].copy_(x * 2)
        tol = {"float32": 1e-5}
        got = self.confined.op_check({"problem": "p", "slot": "main", "atol": tol, "rtol": tol})
        self.assertTrue(got["ok"] and got["pass"], got)

    def test_released_buffers_go_back_and_their_files_with_them(self):
        r = self.confined.op_prepare({"problem": "p", "slot": "main", "seed": 11})
        paths = [d["tensor"]["path"] for d in r["slot"]["inputs"]]
        self.assertTrue(all(os.path.exists(p) for p in paths))
        self.assertTrue(self.confined.op_release_slots({})["ok"])
        self.assertEqual(self.trusted.lender.lent, {})
        self.assertFalse(any(os.path.exists(p) for p in paths))
        self.assertEqual(self.kforge.events.count("give_back"), 4)

    def test_what_a_killed_confined_judge_held_is_reclaimed_whole(self):
        r = self.confined.op_prepare({"problem": "p", "slot": "main", "seed": 11})
        paths = [d["tensor"]["path"] for d in r["slot"]["inputs"]] + \
            [d["path"] for d in r["slot"]["outputs"]]
        got = self.trusted.op_reclaim({})  # kforge's StopConfined: no ids
        self.assertEqual(got, {"ok": True, "freed": 4})
        self.assertFalse(any(os.path.exists(p) for p in paths))

    def test_a_refused_borrow_fails_the_request_with_kforges_reason(self):
        self.kforge.refuse = "the trusted judge is out of memory"
        self.confined.in_op = False
        # Served as kforge would send it: the reply is a failure naming the reason.
        chan = _Chan([{"op": "prepare", "problem": "p", "slot": "main", "seed": 11}],
                     self.kforge)
        self.confined.chan = chan
        self.confined.serve()
        reply = chan.replies[0]
        self.assertFalse(reply["ok"])
        self.assertIn("the trusted judge is out of memory", reply["message"])
        self.assertEqual(self.trusted.lender.lent, {})

    def test_the_trusted_judge_refuses_what_is_not_a_buffer(self):
        for msg, why in [({"shape": [2, -1], "dtype": "float32"}, "shape"),
                         ({"shape": [2], "dtype": "complex64"}, "dtype"),
                         ({"shape": [1] * 17, "dtype": "float32"}, "shape")]:
            r = self.trusted.op_lend(msg)
            self.assertFalse(r["ok"], msg)
            self.assertIn(why, r["message"])
        self.assertEqual(self.trusted.lender.lent, {})
        self.assertFalse(self.confined.op_lend({"shape": [2], "dtype": "float32"})["ok"])

    def test_an_untrusted_problem_may_not_borrow_past_the_memory_it_could_hold(self):
        # With a budget (the device's memory stand-in) of 1 MiB: 512 KiB lent, then 768 KiB
        # more refused, and nothing made for it; given back, it may borrow again.
        self.trusted.memory.budget = 1 << 20
        ok = self.trusted.op_lend({"shape": [128, 1024], "dtype": "float32"})
        self.assertTrue(ok["ok"], ok)
        r = self.trusted.op_lend({"shape": [192, 1024], "dtype": "float32"})
        self.assertFalse(r["ok"])
        self.assertIn("over the 1048576", r["message"])
        self.assertEqual(list(self.trusted.lender.lent), [ok["id"]])
        self.trusted.op_reclaim({"ids": [ok["id"]]})
        self.assertTrue(self.trusted.op_lend({"shape": [192, 1024], "dtype": "float32"})["ok"])
        # A shape whose size alone is absurd is refused before anything is made.
        r = self.trusted.op_lend({"shape": [1 << 40, 1 << 20], "dtype": "float32"})
        self.assertFalse(r["ok"])

    def test_a_give_back_outside_a_request_waits_for_the_reclaim(self):
        self.confined.op_prepare({"problem": "p", "slot": "main", "seed": 11})
        self.confined.in_op = False  # between requests kforge reads no events
        n = len(self.kforge.events)
        self.confined.problems["p"].release()
        self.assertEqual(len(self.kforge.events), n)
        self.assertEqual(len(self.trusted.lender.lent), 4)
        self.assertEqual(self.trusted.op_reclaim({})["freed"], 4)


class _Chan:
    """Requests in, replies out; events in between go to `kforge`."""

    def __init__(self, requests, kforge):
        self.requests = list(requests)
        self.kforge = kforge
        self.replies = []

    def recv(self):
        if self.kforge.answers:
            return self.kforge.recv()
        if not self.requests:
            raise EOFError
        return self.requests.pop(0)

    def send(self, msg):
        if "event" in msg:
            self.kforge.send(msg)
        else:
            self.replies.append(msg)


if __name__ == "__main__":
    unittest.main()
