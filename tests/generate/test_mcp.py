"""kforge mcp: whole MCP sessions over stdio (initialize, tools, evaluate, generate), the
registry as the only source of problems, batches, progress and tool errors."""
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
import uuid

sys.path.insert(0, os.path.dirname(__file__))
from common import CORRECT, EVAL_FLAGS, KFORGE, PROBLEM, ROOT, WRONG, reply  # noqa: E402
from fake_model_server import FakeModelServer, closed_port_url  # noqa: E402

PROBLEMS = ["--problems", os.path.join(ROOT, "problems")]


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

    def request_with_notes(self, method, params=None, timeout=300):
        """The response, and the notifications that came before it."""
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send_raw(json.dumps(msg))
        notes = []
        while True:
            resp = self.receive(timeout)
            if "id" in resp:
                break
            notes.append(resp)
        assert resp["jsonrpc"] == "2.0" and resp["id"] == self.next_id, resp
        return resp, notes

    def request(self, method, params=None, timeout=300):
        resp, notes = self.request_with_notes(method, params, timeout)
        assert not notes, notes  # no progress token, no notifications
        return resp

    def call(self, tool, arguments, timeout=300, token=None):
        params = {"name": tool, "arguments": arguments}
        if token is not None:
            params["_meta"] = {"progressToken": token}
        resp, notes = self.request_with_notes("tools/call", params, timeout)
        if token is None:
            assert not notes, notes
        return resp["result"], notes

    def initialize(self, version):
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "test", "version": "1"}})
        assert r["result"]["protocolVersion"] == version, r
        self.notify("notifications/initialized")
        return r

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


class McpCase(unittest.TestCase):
    def session(self, extra=()):
        s = McpSession(PROBLEMS + list(extra) + EVAL_FLAGS)
        self.addCleanup(lambda: s.proc.poll() is None and s.close())
        return s

    def assertToolError(self, result, *phrases):
        self.assertTrue(result["isError"], result)
        text = result["content"][0]["text"]
        for p in phrases:
            self.assertIn(p, text)
        self.assertNotIn("Traceback", text)
        self.assertNotIn("json.exception", text)  # no raw library error
        return text

    def assertProgress(self, notes, token, total):
        self.assertTrue(notes)
        last = -1
        for n in notes:
            self.assertEqual(n["method"], "notifications/progress")
            p = n["params"]
            self.assertEqual(p["progressToken"], token)
            self.assertEqual(p["total"], total)
            self.assertGreater(p["progress"], last)  # the spec: progress grows every time
            self.assertLessEqual(p["progress"], total)
            last = p["progress"]
        return [n["params"].get("message", "") for n in notes]


class McpSessionTest(McpCase):
    def test_session(self):
        out = tempfile.mkdtemp(prefix="kforge-mcp-")
        self.addCleanup(shutil.rmtree, out, True)
        with FakeModelServer([reply(WRONG), reply(CORRECT)]) as server:
            s = self.session(["--model-url", server.url, "--model", "fake-coder", "--retries", "0",
                              "--samples", "1", "--turns", "2"])
            try:
                self.run_session(s, server, out)
            finally:
                rc = s.close()
        self.assertEqual(rc, 0, "".join(s.stderr))

    def run_session(self, s, server, out):
        r = s.initialize("2025-06-18")
        self.assertIn("tools", r["result"]["capabilities"])
        self.assertEqual(r["result"]["serverInfo"]["name"], "kforge")
        self.assertEqual(s.request("ping")["result"], {})

        tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
        self.assertEqual(set(tools), {"evaluate_kernel", "generate_kernel", "optimize_kernel",
                                      "list_problems", "get_problem"})
        for t in tools.values():
            self.assertEqual(t["inputSchema"]["type"], "object")
            self.assertTrue(t["description"])
            self.assertEqual(t["outputSchema"]["type"], "object")  # 2025-06-18 has them
        self.assertIn("problem", tools["evaluate_kernel"]["inputSchema"]["required"])
        self.assertIn("reward", tools["evaluate_kernel"]["outputSchema"]["required"])

        # Protocol errors: unknown method, malformed JSON, unknown tool.
        self.assertEqual(s.request("resources/read")["error"]["code"], -32601)
        s.send_raw("{this is not json")
        r = s.receive()
        self.assertEqual(r["error"]["code"], -32700)
        self.assertIsNone(r["id"])
        r = s.request("tools/call", {"name": "no_such_tool", "arguments": {}})
        self.assertEqual(r["error"]["code"], -32602)

        result, _ = s.call("list_problems", {"prefix": "level1/"})
        self.assertFalse(result["isError"])
        ids = [p["id"] for p in result["structuredContent"]["problems"]]
        self.assertIn("level1/relu", ids)
        self.assertTrue(all(i.startswith("level1/") for i in ids), ids)

        # A registered id.
        result, _ = s.call("get_problem", {"problem": "level1/relu"})
        self.assertFalse(result["isError"], result)
        self.assertIn("shape [256, 16384]", result["content"][0]["text"])
        self.assertEqual(result["structuredContent"]["id"], "level1/relu")
        self.assertEqual(result["structuredContent"]["inputs"][0]["shape"], [256, 16384])

        # evaluate_kernel with a progress token: the stages as they pass, then the verdict,
        # with its reward in the text and the verdict JSON as structuredContent. A new text
        # (a nonce comment), so it is evaluated and not answered from the store.
        fresh = CORRECT + "\n# nonce %s\n" % uuid.uuid4().hex
        result, notes = s.call("evaluate_kernel", {"problem": "level1/relu", "candidate": fresh},
                               token="eval-1")
        self.assertFalse(result["isError"], result)
        verdict = result["structuredContent"]
        self.assertEqual(verdict["status"], "ok")
        self.assertEqual(verdict["problem"]["id"], "level1/relu")
        self.assertIsInstance(verdict["reward"], float)
        text = result["content"][0]["text"]
        self.assertTrue(text.startswith("status: ok, reward %.3f" % verdict["reward"]), text)
        self.assertEqual(json.loads(result["content"][1]["text"]), verdict)
        messages = self.assertProgress(notes, "eval-1", 3)
        self.assertTrue(messages[0].startswith("extract"), messages)
        self.assertTrue(any("execute on cpu" in m for m in messages), messages)
        # Again: the stored verdict, at once, and the progress says where it came from.
        again, notes = s.call("evaluate_kernel", {"problem": "level1/relu", "candidate": fresh},
                              token="eval-2")
        self.assertEqual(again["structuredContent"], verdict)
        self.assertTrue(any("stored" in m for m in self.assertProgress(notes, "eval-2", 3)), notes)

        # The same without a token: no notification at all (s.call checks), same verdict.
        result, _ = s.call("evaluate_kernel", {"problem": PROBLEM, "candidate": WRONG})
        self.assertFalse(result["isError"], result)
        self.assertEqual(result["structuredContent"]["status"], "incorrect")
        self.assertIn("reward -", result["content"][0]["text"])

        # generate_kernel against the fake server, a wrong kernel then a correct one: one
        # progress step per turn.
        result, notes = s.call("generate_kernel", {"problem": "level1/relu", "out": out},
                               timeout=600, token=7)
        self.assertFalse(result["isError"], result)
        best = result["structuredContent"]["best"]
        self.assertEqual(best["turn"], 2)
        self.assertEqual(best["candidate"], CORRECT)
        self.assertEqual(best["verdict"]["status"], "ok")
        text = result["content"][0]["text"]
        self.assertIn("```python", text)
        self.assertIn("reward %.3f" % best["verdict"]["reward"], text)
        traj = result["structuredContent"]["trajectories"][0]
        self.assertEqual(traj["first_pass_turn"], 2)
        self.assertTrue(os.path.exists(os.path.join(out, "trajectories.jsonl")))
        self.assertEqual(len(server.requests), 2)
        self.assertIn("has shape [4194304]", server.prompts()[1])
        messages = self.assertProgress(notes, 7, 2)
        self.assertTrue(any(m.startswith("sample 0 turn 1: incorrect") for m in messages), messages)
        self.assertTrue(any(m.startswith("sample 0 turn 2: ok") for m in messages), messages)

        # optimize_kernel: turn 0 verifies the given (wrong) kernel, the model then repairs it.
        result, _ = s.call("optimize_kernel", {"problem": "level1/relu", "candidate": WRONG,
                                               "turns": 1}, timeout=600)
        self.assertFalse(result["isError"], result)
        self.assertEqual(result["structuredContent"]["best"]["turn"], 1)
        self.assertEqual(result["structuredContent"]["best"]["candidate"], CORRECT)
        self.assertEqual(len(server.requests), 3)
        self.assertIn(WRONG, server.prompts()[2])


class McpRegistryTest(McpCase):
    def test_problems_come_only_from_the_registry(self):
        outside = tempfile.mkdtemp(prefix="kforge-mcp-outside-")
        self.addCleanup(shutil.rmtree, outside, True)
        copy = os.path.join(outside, "relu.py")
        shutil.copy(PROBLEM, copy)  # a real problem, but not one the operator registered
        s = self.session()
        s.initialize("2025-06-18")
        for tool in ("get_problem", "evaluate_kernel"):
            for name in ("/etc/passwd", copy, "level9/nothing", "../problems/level1/relu.py"):
                args = {"problem": name}
                if tool == "evaluate_kernel":
                    args["candidate"] = CORRECT
                result, _ = s.call(tool, args)
                self.assertToolError(result, "unknown problem '%s'" % name, "list_problems")
        # The registered file's path, however spelt, means its id.
        for name in (PROBLEM, "problems/level1/../level1/relu.py"):
            result, _ = s.call("get_problem", {"problem": name})
            self.assertFalse(result["isError"], result)
            self.assertEqual(result["structuredContent"]["id"], "level1/relu")
        self.assertEqual(s.close(), 0)

    def test_no_problem_folder_is_a_usage_error(self):
        r = subprocess.run([KFORGE, "mcp", "--problems", "/nonexistent/problems"], input="",
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("no problem folder /nonexistent/problems", r.stderr)
        self.assertEqual(r.stdout, "")


class McpProtocolTest(McpCase):
    BATCH = [{"jsonrpc": "2.0", "id": "a", "method": "ping"},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": "b", "method": "tools/call",
              "params": {"name": "list_problems", "arguments": {"prefix": "level3/"}}},
             {"jsonrpc": "2.0", "id": "c", "method": "tools/call",
              "params": {"name": "get_problem", "arguments": {"problem": "/etc/passwd"}}}]

    def test_batches_under_2025_03_26(self):
        s = self.session()
        s.initialize("2025-03-26")
        s.send_raw(json.dumps(self.BATCH))
        r = s.receive()
        self.assertIsInstance(r, list)
        self.assertEqual([x["id"] for x in r], ["a", "b", "c"])  # the notification: no answer
        self.assertEqual(r[0]["result"], {})
        ids = [p["id"] for p in r[1]["result"]["structuredContent"]["problems"]]
        self.assertIn("level3/mlp_block", ids)
        self.assertTrue(r[2]["result"]["isError"])
        # No outputSchema before 2025-06-18.
        tools = s.request("tools/list")["result"]["tools"]
        self.assertFalse(any("outputSchema" in t for t in tools))
        self.assertEqual(s.close(), 0)

    def test_batches_refused_under_2025_06_18(self):
        s = self.session()
        s.initialize("2025-06-18")
        s.send_raw(json.dumps(self.BATCH))
        r = s.receive()
        self.assertIsInstance(r, dict)  # one error for the whole batch, nothing of it run
        self.assertIsNone(r["id"])
        self.assertEqual(r["error"]["code"], -32600)
        self.assertIn("batches", r["error"]["message"])
        self.assertEqual(s.request("ping")["result"], {})  # and the session goes on
        self.assertEqual(s.close(), 0)

    def test_bad_arguments_are_tool_errors_with_a_message(self):
        s = self.session(["--retries", "0"])
        s.initialize("2025-06-18")
        cases = [
            ("evaluate_kernel", {"candidate": CORRECT}, ["argument 'problem' is required"]),
            ("evaluate_kernel", {"problem": 3, "candidate": CORRECT},
             ["argument 'problem' must be a string (got an integer)"]),
            ("evaluate_kernel", {"problem": "level1/relu", "candidat": CORRECT},
             ["unknown argument 'candidat'"]),
            ("evaluate_kernel", {"problem": "level1/relu"}, ["pass the candidate as `candidate`"]),
            ("evaluate_kernel", {"problem": "level1/relu", "candidate_file": "/no/such/file.py"},
             ["cannot read candidate_file '/no/such/file.py'", "No such file"]),
            ("evaluate_kernel", {"problem": "level1/relu", "candidate": CORRECT,
                                 "candidate_file": PROBLEM}, ["not both"]),
            ("generate_kernel", {"problem": "level1/relu", "samples": "4"},
             ["argument 'samples' must be an integer (got a string)"]),
            ("generate_kernel", {"problem": "level1/relu", "samples": 100},
             ["argument 'samples' must be at most 64 (got 100)"]),
            ("generate_kernel", {"problem": "level1/relu", "turns": 0},
             ["argument 'turns' must be at least 1"]),
            ("generate_kernel", {"problem": "level1/relu"}, ["no model server configured"]),
            ("generate_kernel", {"problem": "level1/relu", "model": "m",
                                 "model_url": closed_port_url()},
             ["cannot reach the model server"]),
        ]
        for tool, args, phrases in cases:
            with self.subTest(tool=tool, args=args):
                result, _ = s.call(tool, args, timeout=300)
                self.assertToolError(result, *phrases)
        # Malformed requests stay protocol errors.
        r = s.request("tools/call", {"name": "evaluate_kernel", "arguments": "level1/relu"})
        self.assertEqual(r["error"]["code"], -32602)
        self.assertEqual(s.request("ping")["result"], {})
        self.assertEqual(s.close(), 0)


if __name__ == "__main__":
    unittest.main()
