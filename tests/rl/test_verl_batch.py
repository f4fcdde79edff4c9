"""examples/rl/kforge_verl_reward.py's batch function against a stub service on loopback: how a
verl batch becomes groups and requests, and how answers come back to their samples. (The real
service, and the timing property, are tests/serve/test_groups.py.)"""
import http.server
import json
import os
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "rl"))
import kforge_verl_reward as verl  # noqa: E402


class Stub(http.server.BaseHTTPRequestHandler):
    """POST /v1/groups: each candidate's reward is the number it holds ("r=0.5")."""
    bodies = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Stub.bodies.append((self.path, body, self.headers.get("Authorization")))
        groups = []
        for g in body["groups"]:
            results = []
            for c in g["candidates"]:
                r = float(c.split("=")[1])
                results.append({"reward": r, "status": "ok" if r >= 1 else "incorrect",
                                "state": "done", "speedup_vs_eager": r})
            groups.append({"results": results})
        out = json.dumps({"groups": groups}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


class BatchFunction(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        os.environ["KFORGE_URL"] = "http://127.0.0.1:%d" % cls.server.server_address[1]
        os.environ["KFORGE_TOKEN"] = "t" * 20

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self):
        Stub.bodies.clear()

    def test_interleaved_prompts_become_groups_and_answers_keep_their_order(self):
        # Two prompts of one problem (told apart by extra_info) and one of another, interleaved.
        sols = ["r=1.5", "r=-1", "r=0.25", "r=-0.5", "r=1", "r=-1"]
        gts = ["level1/relu", "level1/relu", "level2/gemm", "level1/relu", "level2/gemm",
               "level1/relu"]
        extras = [{"index": 0}, {"index": 1}, {"index": 2}, {"index": 0}, {"index": 2},
                  {"index": 1, "prompt": "Write a ReLU"}]
        scores = verl.compute_score_batch(["kernelbench"] * 6, sols, gts, extras)
        self.assertEqual([s["score"] for s in scores], [1.5, -1.0, 0.25, -0.5, 1.0, -1.0])
        self.assertEqual([s["correct"] for s in scores], [1.0, 0, 0, 0, 1.0, 0])
        self.assertEqual({tuple(sorted(s)) for s in scores},
                         {("correct", "score", "speedup", "status")})  # one set of keys for verl
        self.assertEqual(len(Stub.bodies), 1)  # the whole batch in one request
        path, body, auth = Stub.bodies[0]
        self.assertEqual(path, "/v1/groups")
        self.assertEqual(auth, "Bearer " + "t" * 20)
        groups = body["groups"]
        self.assertEqual([g["candidates"] for g in groups],
                         [["r=1.5", "r=-0.5"], ["r=-1"], ["r=0.25", "r=1"], ["r=-1"]])
        self.assertEqual(groups[0]["problem"], "level1/relu")
        self.assertEqual(groups[0]["metadata"], {"index": 0})
        self.assertEqual(groups[3]["prompt"], "Write a ReLU")
        self.assertNotIn("prompt", groups[0])

    def test_labels_holding_a_problems_source(self):
        src = "class Model(nn.Module):\n    pass\n"
        verl.compute_score_batch(["x", "x"], ["r=0", "r=0"], [src, src], None)
        g = Stub.bodies[0][1]["groups"]
        self.assertEqual(len(g), 1)
        self.assertEqual(g[0]["problem_source"], src)
        self.assertNotIn("metadata", g[0])

    def test_large_batches_are_split_between_groups(self):
        old = verl.MAX_SAMPLES_PER_REQUEST
        verl.MAX_SAMPLES_PER_REQUEST = 4
        try:
            sols = ["r=%d" % i for i in range(10)]
            gts = ["p%d" % (i // 2) for i in range(10)]  # 5 groups of 2
            scores = verl.compute_score_batch(["d"] * 10, sols, gts, None)
        finally:
            verl.MAX_SAMPLES_PER_REQUEST = old
        self.assertEqual([s["score"] for s in scores], [float(i) for i in range(10)])
        sizes = sorted(sum(len(g["candidates"]) for g in b["groups"]) for _, b, _ in Stub.bodies)
        self.assertEqual(sizes, [2, 4, 4])

    def test_lengths_must_match(self):
        with self.assertRaises(ValueError):
            verl.compute_score_batch(["d"], ["a", "b"], ["p"], None)


if __name__ == "__main__":
    unittest.main()
