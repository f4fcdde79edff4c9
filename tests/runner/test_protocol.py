"""Tests for the runner protocol (runner/protocol.json, runner/kforge_runner/protocol.py; kforge's
side: src/common/protocol_test.cc): each service's dispatch table lists exactly the schema's ops,
a malformed request is answered with an error that names the op and the field, the replies the
judge and a candidate host really give fit the schema, and the version the file states is the
one the runner reports at hello (a different one is refused).
Run with /usr/bin/python3 -m unittest discover -s tests/runner (needs torch)."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "..", "runner")
sys.path.insert(0, RUNNER)

from kforge_runner import build_worker, candidate, judge, protocol, zygote  # noqa: E402

PROBLEM = '''
import torch
import torch.nn as nn
n = 8
KFORGE_SHAPE_VARIANTS = [{"n": 12}]

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn(4, n)]

def get_init_inputs():
    return []
'''

CANDIDATE = '''
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


class FakeChannel:
    """Hands a service its requests one by one (a list, or a generator that may read the
    replies so far) and keeps what it was given and what it sent."""

    def __init__(self, requests):
        self.requests = iter(requests)
        self.received = []
        self.sent = []

    def recv(self):
        try:
            msg = next(self.requests)
        except StopIteration:
            raise EOFError
        self.received.append(json.loads(json.dumps(msg)))  # as sent: the judge keeps and adds to
        return msg

    def send(self, msg):
        self.sent.append(json.loads(json.dumps(msg)))  # as the other side reads it


class FakeNative:
    """kforge's compiled helper's batch of timed calls, without timing."""

    def run_batch(self, fn, arg_sets, first, iters, flush, cuda, before, delay_us):
        last = [None] * len(arg_sets)
        for i in range(first, first + iters):
            slot = i % len(arg_sets)
            if before is not None:
                before(slot, i)
            last[slot] = fn(*arg_sets[slot])
        return [0.01] * iters, [0.02] * iters, last, [0.005] * iters, 0


class DispatchTest(unittest.TestCase):
    def assert_same_ops(self, service, handled):
        self.assertEqual(sorted(handled | {"exit"}), sorted(protocol.ops(service)))

    def test_every_service_handles_exactly_the_schema_ops(self):
        def methods(cls):
            return {n[len("op_"):] for n in dir(cls) if n.startswith("op_")}
        self.assert_same_ops("judge", methods(judge.Judge))
        self.assert_same_ops("candidate", methods(candidate.Host))
        self.assert_same_ops("zygote", set(zygote.HANDLERS))
        self.assert_same_ops("build_worker", set(build_worker.HANDLERS))

    def test_the_schema_is_well_formed(self):
        types = set(protocol._SIMPLE)
        for name, service in protocol.SCHEMA["services"].items():
            for group in ("ops", "events"):
                for op, spec in service.get(group, {}).items():
                    for part in ("request", "reply", "failure"):
                        for field, t in (spec.get(part) or {}).items():
                            for alt in t.rstrip("?").split("|"):
                                alt = alt[len("array<"):-1] if alt.startswith("array<") else alt
                                self.assertIn(alt, types, "%s.%s.%s.%s" % (name, op, part, field))


class MalformedTest(unittest.TestCase):
    def answers(self, requests):
        chan = FakeChannel(requests)
        judge.Judge(chan).serve()
        return chan.sent

    def test_a_malformed_request_is_an_error_naming_the_op_and_the_field(self):
        sent = self.answers([
            {"op": "prepare", "problem": "p", "slot": "main", "seed": "7"},
            {"op": "prepare", "problem": "p", "slot": "main"},
            {"op": "prepare", "problem": "p", "slot": "main", "seed": 7, "colour": "red"},
            {"op": "launch_missiles"},
            {"device": "cpu"},
        ])
        self.assertEqual([r["ok"] for r in sent], [False] * 5)
        self.assertIn("judge 'prepare' request: field 'seed' must be integer, not string",
                      sent[0]["message"])
        self.assertIn("missing required field 'seed'", sent[1]["message"])
        self.assertIn("unknown field 'colour'", sent[2]["message"])
        self.assertIn("unknown op 'launch_missiles'", sent[3]["message"])
        self.assertIn("missing required field 'op'", sent[4]["message"])
        for r in sent:
            self.assertIsNone(protocol.check_fields(protocol.SCHEMA["services"]["judge"]["error"],
                                                    r, "error", skip=("ok",)))

    def test_a_candidate_hosts_protocol_error_blames_the_runner(self):
        chan = FakeChannel([{"op": "call", "slot": 3, "buffers": {}}])
        candidate.Host(chan, {"device": "cpu"}).serve()
        self.assertEqual(chan.sent[0]["kind"], "internal")  # kforge's fault, not the candidate's
        self.assertIn("field 'slot' must be string", chan.sent[0]["message"])

    def test_a_wrong_reply_is_caught_when_replies_are_checked(self):
        old = protocol.CHECK_REPLIES
        protocol.CHECK_REPLIES = True
        try:
            bad = protocol.checked("judge", "memory", {"ok": True, "peak_bytes": 1.5})
        finally:
            protocol.CHECK_REPLIES = old
        self.assertFalse(bad["ok"])
        self.assertIn("judge 'memory' reply: field 'peak_bytes' must be integer", bad["message"])


class VersionTest(unittest.TestCase):
    def test_the_file_states_the_version_the_runner_reports(self):
        with open(os.path.join(RUNNER, "protocol.json")) as f:
            version = json.load(f)["version"]
        self.assertEqual(protocol.VERSION, version)
        chan = FakeChannel([{"op": "hello", "device": "cpu", "protocol": version},
                            {"op": "hello", "device": "cpu", "protocol": version + 1},
                            {"op": "hello", "device": "cpu"}])
        j = judge.Judge(chan)
        j.serve()
        shutil.rmtree(j.shm_dir, ignore_errors=True)
        self.assertTrue(chan.sent[0]["ok"])
        self.assertEqual(chan.sent[0]["protocol"], version)
        for refused in chan.sent[1:]:
            self.assertFalse(refused["ok"])
            self.assertIn("judge 'hello' request: field 'protocol': protocol version mismatch",
                          refused["message"])

    def test_the_build_worker_reports_it_over_its_socket(self):
        mine, theirs = socket.socketpair()
        proc = subprocess.Popen(
            [sys.executable, "-m", "kforge_runner.build_worker", "--fd", str(theirs.fileno())],
            pass_fds=[theirs.fileno()], env=dict(os.environ, PYTHONPATH=RUNNER))
        theirs.close()
        reader = mine.makefile("r")
        try:
            def ask(msg):
                mine.sendall((json.dumps(msg) + "\n").encode())
                return json.loads(reader.readline())
            hello = ask({"op": "hello", "backend": "cpu", "probe": {},
                         "protocol": protocol.VERSION})
            self.assertTrue(hello["ok"], hello)
            self.assertEqual(hello["protocol"], protocol.VERSION)
            self.assertIsNone(protocol.check_reply("build_worker", "hello", hello))
            bad = ask({"op": "build", "dir": "/nonexistent"})
            self.assertFalse(bad["ok"])
            self.assertIn("build_worker 'build' request: missing required field 'spec'",
                          bad["message"])
            mine.sendall(b'{"op": "exit"}\n')
            self.assertEqual(proc.wait(timeout=30), 0)
        finally:
            reader.close()
            mine.close()
            if proc.poll() is None:
                proc.kill()
                proc.wait()


class RealRepliesTest(unittest.TestCase):
    """The judge and a candidate host on the CPU, every reply checked against the schema."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kforge-protocol-test-")
        self.problem = os.path.join(self.dir, "problem.py")
        with open(self.problem, "w") as f:
            f.write(PROBLEM)
        self.old = protocol.CHECK_REPLIES
        protocol.CHECK_REPLIES = True

    def tearDown(self):
        protocol.CHECK_REPLIES = self.old
        shutil.rmtree(self.dir, ignore_errors=True)

    def assert_fit(self, service, chan):
        asked = [m for m in chan.received if m.get("op") != "exit"]
        self.assertEqual(len(asked), len(chan.sent))
        for msg, reply in zip(asked, chan.sent):
            self.assertIsNone(protocol.check_request(service, msg))
            self.assertTrue(reply["ok"], (msg, reply))
            self.assertIsNone(protocol.check_reply(service, msg["op"], reply))

    def test_the_judges_and_the_hosts_replies_fit_the_schema(self):
        hosts = []

        def script(chan):
            yield {"op": "hello", "device": "cpu", "protocol": protocol.VERSION}
            yield {"op": "load_problem", "id": "p", "path": self.problem, "init_seed": 5}
            loaded = chan.sent[-1]
            self.assertEqual(len(loaded["shape_variants"]), 1)
            yield {"op": "prepare", "problem": "p", "slot": "main", "seed": 3, "signed": False}
            slot = chan.sent[-1]["slot"]
            yield {"op": "prepare", "problem": "p", "slot": "shape0", "seed": 4, "variant": 0}
            yield {"op": "time", "problem": "p", "mode": "noop", "slots": ["shape0"],
                   "first": 0, "iters": 0, "outputs": True}
            yield {"op": "gpu_state"}
            yield {"op": "memory"}
            # A candidate host answers on the judge's buffers, as kforge runs it.
            host = FakeChannel([{"op": "load", "code": CANDIDATE, "problem_code": PROBLEM,
                                 "init_inputs": loaded["init_inputs"], "init_seed": 5,
                                 "poison": loaded["outputs"]},
                                {"op": "call", "slot": "main", "buffers": slot},
                                {"op": "time", "slots": ["main"], "buffers": [slot],
                                 "first": 0, "iters": 2, "perturb_seed": 9, "delay_us": 25.0},
                                {"op": "emit", "slot": "main", "buffers": slot},
                                {"op": "memory"},
                                {"op": "exit"}])
            h = candidate.Host(host, {"device": "cpu"})
            h.run_batch = FakeNative().run_batch
            h.serve()
            hosts.append(host)
            yield {"op": "check", "problem": "p", "slot": "main", "atol": {"float32": 1e-4},
                   "rtol": {"float32": 1e-4},
                   "perturb": {"seed": 9, "index": 1}}
            self.assertTrue(chan.sent[-1]["pass"], chan.sent[-1])
            yield {"op": "release_slots"}
            yield {"op": "release", "problem": "p"}
            yield {"op": "exit"}

        chan = FakeChannel([])
        chan.requests = script(chan)
        with mock.patch.object(judge, "native", FakeNative()):
            judge.Judge(chan).serve()
        self.assert_fit("judge", chan)
        self.assert_fit("candidate", hosts[0])


if __name__ == "__main__":
    unittest.main()
