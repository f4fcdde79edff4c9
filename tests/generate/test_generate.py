"""kforge generate against a scripted model server on loopback (CPU backend, end to end)."""
import json
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from common import CORRECT, EVAL_FLAGS, NO_COMPILE, PROBLEM, WRONG, reply, run_kforge  # noqa: E402
from fake_model_server import FakeModelServer, closed_port_url  # noqa: E402


class GenerateTest(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="kforge-generate-")

    def tearDown(self):
        shutil.rmtree(self.out, ignore_errors=True)

    def generate(self, url, extra=(), timeout=600):
        args = ["generate", "--problem", PROBLEM, "--model-url", url, "--model", "fake-coder",
                "--out", self.out] + list(extra) + EVAL_FLAGS
        if "--retries" not in extra:
            args += ["--retries", "0"]
        t0 = time.time()
        r = run_kforge(args, timeout=timeout, env=dict(os.environ, FAKE_KEY="sk-fake"))
        return r, time.time() - t0

    def test_three_turns_to_a_verified_kernel(self):
        replies = [reply(NO_COMPILE), reply(WRONG), reply(CORRECT, thought="fixed the shape")]
        with FakeModelServer(replies) as server:
            r, _ = self.generate(server.url, ["--samples", "1", "--turns", "3", "--sampling-seed", "7",
                                              "--api-key-env", "FAKE_KEY", "--temperature", "0.3"])
            prompts = server.prompts()
            bodies = [q["body"] for q in server.requests]
            auth = [q["auth"] for q in server.requests]
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # Progress per turn, then the best kernel and its verdict.
        for line in ("sample 0 turn 1: compile_error", "sample 0 turn 2: incorrect",
                     "sample 0 turn 3: ok", "best: sample 0 turn 3", "speedup:"):
            self.assertIn(line, r.stdout)
        with open(os.path.join(self.out, "best.py")) as f:
            self.assertEqual(f.read(), CORRECT)
        with open(os.path.join(self.out, "best.json")) as f:
            self.assertEqual(json.load(f)["status"], "ok")

        # The requests: OpenAI fields, the key as a Bearer token, the seed of sample 0.
        self.assertEqual(len(bodies), 3)
        self.assertEqual(bodies[0]["model"], "fake-coder")
        self.assertEqual(bodies[0]["seed"], 7)
        self.assertEqual(bodies[0]["temperature"], 0.3)
        self.assertEqual(bodies[0]["messages"][0]["role"], "system")
        self.assertEqual(auth[0], "Bearer sk-fake")

        # Every turn with its verdict and reward, then the trajectory with its PrimeEcho reward.
        with open(os.path.join(self.out, "trajectories.jsonl")) as f:
            lines = [json.loads(x) for x in f if x.strip()]
        turns = [x for x in lines if x["type"] == "turn"]
        trajs = [x for x in lines if x["type"] == "trajectory"]
        self.assertEqual([t["turn"] for t in turns], [1, 2, 3])
        self.assertEqual([t["status"] for t in turns], ["compile_error", "incorrect", "ok"])
        self.assertEqual([t["verdict"]["status"] for t in turns], ["compile_error", "incorrect", "ok"])
        for t in turns:
            self.assertEqual(t["sample"], 0)
            self.assertEqual(t["reward"], t["verdict"]["reward"])
            self.assertEqual(t["messages"][-1]["content"], prompts[t["turn"] - 1])
            self.assertTrue(t["reply"].startswith("Here is my kernel."), t["reply"])
            self.assertNotIn("<think>", t["reply"])
        self.assertEqual(turns[0]["reasoning"], "I will write a C++ loop.")
        self.assertEqual(turns[2]["reasoning"], "fixed the shape")
        self.assertEqual([t["candidate"] for t in turns], [NO_COMPILE, WRONG, CORRECT])
        self.assertEqual(len(trajs), 1)
        tr = trajs[0]
        rewards = [t["reward"] for t in turns]
        self.assertEqual(tr["rewards"], rewards)
        self.assertEqual(tr["first_pass_turn"], 3)
        self.assertEqual(tr["stop_reason"], "passed")
        # PrimeEcho with the defaults: alpha 0.75, no early bonus at turn 3.
        self.assertAlmostEqual(tr["prime_echo"], 0.75 * rewards[0] + 0.25 * max(rewards), places=9)

        # Shape injection in the first prompt; each later prompt holds the previous candidate
        # and its verdict's feedback.
        self.assertIn("shape [256, 16384], stride [16384, 1], contiguous, on cpu", prompts[0])
        self.assertIn("backend cpu", prompts[0])
        for k in (1, 2):
            self.assertIn(turns[k - 1]["candidate"], prompts[k])
            self.assertIn(turns[k - 1]["verdict"]["feedback"], prompts[k])
        self.assertIn('#include "relu_helpers.h"', prompts[1])
        self.assertIn("relu_helpers.h: No such file or directory", prompts[1])
        self.assertIn("has shape [4194304]", prompts[2])

    def test_parallel_samples_share_one_lane(self):
        with FakeModelServer([reply(CORRECT)]) as server:
            r, _ = self.generate(server.url, ["--samples", "3", "--turns", "2", "--sampling-seed", "100"])
            seeds = sorted(q["body"]["seed"] for q in server.requests)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(seeds, [100, 101, 102])
        with open(os.path.join(self.out, "trajectories.jsonl")) as f:
            lines = [json.loads(x) for x in f if x.strip()]
        turns = [x for x in lines if x["type"] == "turn"]
        trajs = sorted((x for x in lines if x["type"] == "trajectory"), key=lambda x: x["sample"])
        self.assertEqual(sorted(t["sample"] for t in turns), [0, 1, 2])
        self.assertTrue(all(t["status"] == "ok" for t in turns), [t["status"] for t in turns])
        for tr in trajs:
            # Passed at turn 1: stops there, with PrimeEcho's turn-1 bonus of 0.2.
            self.assertEqual(tr["stop_reason"], "passed")
            reward = tr["rewards"][0]
            self.assertAlmostEqual(tr["prime_echo"], reward + 0.2, places=9)

    def test_server_down_is_a_clear_error(self):
        r, secs = self.generate(closed_port_url(), ["--samples", "2", "--retries", "1"], timeout=180)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("cannot reach the model server", r.stderr)
        self.assertIn("is the server running?", r.stderr)
        self.assertLess(secs, 120)

    def test_slow_server_times_out(self):
        with FakeModelServer([reply(CORRECT)], mode="slow", delay_s=30) as server:
            r, secs = self.generate(server.url, ["--samples", "1", "--request-timeout-s", "1"],
                                    timeout=180)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("too slow", r.stderr)
        self.assertIn("within 1 s", r.stderr)
        self.assertLess(secs, 120)

    def test_trickling_server_hits_the_whole_request_deadline(self):
        with FakeModelServer(mode="trickle") as server:
            r, secs = self.generate(server.url, ["--samples", "1", "--request-timeout-s", "2"],
                                    timeout=180)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("did not finish within 2 s", r.stderr)
        self.assertLess(secs, 120)

    def test_garbage_answers_are_a_clear_error(self):
        for mode, words in (("garbage", "not JSON"), ("no_choices", "has no choices")):
            with FakeModelServer(mode=mode) as server:
                r, secs = self.generate(server.url, ["--samples", "1"], timeout=180)
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            self.assertIn(words, r.stderr)
            self.assertLess(secs, 120)
            with open(os.path.join(self.out, "trajectories.jsonl")) as f:
                first = json.loads(f.readline())
            self.assertIn(words, first["error"])

    def test_bad_model_url_is_a_usage_error(self):
        r, _ = self.generate("localhost:8000", ["--samples", "1"], timeout=60)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("scheme", r.stderr)


if __name__ == "__main__":
    unittest.main()
