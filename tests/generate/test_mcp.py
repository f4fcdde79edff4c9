"""kforge mcp: a whole MCP session over stdio (initialize, tools, evaluate, generate)."""
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from common import CORRECT, EVAL_FLAGS, KFORGE, PROBLEM, ROOT, WRONG, reply  # noqa: E402
from fake_model_server import FakeModelServer  # noqa: E402


class McpSession:
    """The server as a child process; one JSON message per line each way."""

    def __init__(self, args):
        self.proc = subprocess.Popen([KFORGE, "mcp"] + args, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=ROOT)
        self.lines = queue.Queue()
        self.stderr = []
        self.readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.lines.put), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr.append), daemon=True)]
        for t in self.readers:
            t.start()
        self.next_id = 0

    @staticmethod
    def _read(stream, sink):
        for line in stream:
            sink(line)

    def send_raw(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def receive(self, timeout=300):
        line = self.lines.get(timeout=timeout)
        return json.loads(line)  # every stdout line must be one JSON message

    def request(self, method, params=None, timeout=300):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send_raw(json.dumps(msg))
        resp = self.receive(timeout)
        assert resp["jsonrpc"] == "2.0" and resp["id"] == self.next_id, resp
        return resp

    def notify(self, method):
        self.send_raw(json.dumps({"jsonrpc": "2.0", "method": method}))

    def close(self):
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=60)
        for t in self.readers:
            t.join(timeout=10)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc


class McpTest(unittest.TestCase):
    def test_session(self):
        out = tempfile.mkdtemp(prefix="kforge-mcp-")
        self.addCleanup(shutil.rmtree, out, True)
        with FakeModelServer([reply(WRONG), reply(CORRECT)]) as server:
            s = McpSession(["--model-url", server.url, "--model", "fake-coder", "--retries", "0",
                            "--samples", "1", "--turns", "2"] + EVAL_FLAGS)
            try:
                self.session(s, server, out)
            finally:
                rc = s.close()
        self.assertEqual(rc, 0, "".join(s.stderr))

    def session(self, s, server, out):
        r = s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "test", "version": "1"}})
        self.assertEqual(r["result"]["protocolVersion"], "2025-06-18")
        self.assertIn("tools", r["result"]["capabilities"])
        self.assertEqual(r["result"]["serverInfo"]["name"], "kforge")
        s.notify("notifications/initialized")  # no answer: the next line answers the ping
        self.assertEqual(s.request("ping")["result"], {})

        tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
        self.assertEqual(set(tools), {"evaluate_kernel", "generate_kernel", "optimize_kernel",
                                      "list_problems", "get_problem"})
        for t in tools.values():
            self.assertEqual(t["inputSchema"]["type"], "object")
            self.assertTrue(t["description"])
        self.assertIn("problem", tools["evaluate_kernel"]["inputSchema"]["required"])

        # Protocol errors: unknown method, malformed JSON.
        r = s.request("resources/read")
        self.assertEqual(r["error"]["code"], -32601)
        s.send_raw("{this is not json")
        r = s.receive()
        self.assertEqual(r["error"]["code"], -32700)
        self.assertIsNone(r["id"])

        r = s.request("tools/call", {"name": "list_problems", "arguments": {"path": "problems/level1"}})
        ids = [p["id"] for p in r["result"]["structuredContent"]["problems"]]
        self.assertIn("level1/relu", ids)
        self.assertFalse(r["result"]["isError"])

        r = s.request("tools/call", {"name": "get_problem", "arguments": {"problem": PROBLEM}})
        self.assertFalse(r["result"]["isError"], r)
        self.assertIn("shape [256, 16384]", r["result"]["content"][0]["text"])
        self.assertEqual(r["result"]["structuredContent"]["inputs"][0]["shape"], [256, 16384])

        # A tool failure is a result with isError, not a protocol error.
        r = s.request("tools/call", {"name": "evaluate_kernel",
                                     "arguments": {"problem": "no/such/problem.py", "candidate": "x"}})
        self.assertNotIn("error", r)
        self.assertTrue(r["result"]["isError"])
        self.assertIn("cannot read problem", r["result"]["content"][0]["text"])

        r = s.request("tools/call", {"name": "evaluate_kernel",
                                     "arguments": {"problem": PROBLEM, "candidate": CORRECT}})
        self.assertFalse(r["result"]["isError"], r)
        self.assertEqual(r["result"]["structuredContent"]["status"], "ok")
        self.assertTrue(r["result"]["content"][0]["text"].startswith("status: ok"))

        # generate_kernel against the fake server: a wrong kernel, then a correct one.
        r = s.request("tools/call", {"name": "generate_kernel",
                                     "arguments": {"problem": PROBLEM, "out": out}}, timeout=600)
        result = r["result"]
        self.assertFalse(result["isError"], result)
        best = result["structuredContent"]["best"]
        self.assertEqual(best["turn"], 2)
        self.assertEqual(best["candidate"], CORRECT)
        self.assertEqual(best["verdict"]["status"], "ok")
        self.assertIn("```python", result["content"][0]["text"])
        traj = result["structuredContent"]["trajectories"][0]
        self.assertEqual(traj["first_pass_turn"], 2)
        self.assertTrue(os.path.exists(os.path.join(out, "trajectories.jsonl")))
        self.assertEqual(len(server.requests), 2)
        self.assertIn("has shape [4194304]", server.prompts()[1])

        # optimize_kernel: turn 0 verifies the given (wrong) kernel, the model then repairs it.
        r = s.request("tools/call", {"name": "optimize_kernel",
                                     "arguments": {"problem": PROBLEM, "candidate": WRONG, "turns": 1}},
                      timeout=600)
        result = r["result"]
        self.assertFalse(result["isError"], result)
        self.assertEqual(result["structuredContent"]["best"]["turn"], 1)
        self.assertEqual(result["structuredContent"]["best"]["candidate"], CORRECT)
        self.assertEqual(len(server.requests), 3)
        self.assertIn(WRONG, server.prompts()[2])


if __name__ == "__main__":
    unittest.main()
