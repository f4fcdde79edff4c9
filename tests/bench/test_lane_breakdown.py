"""bench/lane_breakdown.py: a bench's lane time split into parts that add up to it."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "lane_breakdown.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import lane_breakdown  # noqa: E402


def verdict(problem, candidate, spawn, execute, correctness, timing, baselines=None):
    phases = {"device_start": execute / 2, "model": execute / 4}
    stages = [{"name": "build", "ms": 50000.0},  # build time is not lane time
              {"name": "execute", "ms": execute, "spawn_ms": spawn, "run_time_build_ms": 0.0,
               "load_phases_ms": phases},
              {"name": "correctness", "ms": correctness["ms"],
               **{k: v for k, v in correctness.items() if k != "ms"}},
              {"name": "timing", "ms": timing}]
    if baselines is not None:
        stages.append({"name": "baselines", "ms": baselines})
    return {"problem": {"hash": problem}, "candidate": {"hash": candidate}, "stages": stages}


CORRECT = {"ms": 100.0, "prepare_ms": 20.0, "call_ms": 30.0, "profiled_call_ms": 10.0,
           "check_ms": 25.0}


class LaneBreakdownTest(unittest.TestCase):
    def setUp(self):
        self.results = {"run": {"lanes": 2, "lane_busy_ms": [1500.0, 1000.0], "warm_ms": 400.0}}
        self.lines = [
            {"from_store": False, "verdict": verdict("p", "a", 10.0, 210.0, CORRECT, 300.0)},
            # the same candidate in a second sample file: one evaluation, counted once
            {"from_store": False, "verdict": verdict("p", "a", 10.0, 210.0, CORRECT, 300.0)},
            {"from_store": False, "verdict": verdict("p", "b", 20.0, 120.0, CORRECT, 500.0, 90.0)},
            # a stored verdict cost this run nothing
            {"from_store": True, "verdict": verdict("p", "c", 999.0, 999.0, CORRECT, 999.0)},
        ]

    def test_parts_add_up_to_the_lane_time(self):
        parts, n, lane_ms = lane_breakdown.breakdown(self.results, self.lines)
        self.assertEqual(n, 2)
        self.assertEqual(lane_ms, 2500.0)
        self.assertEqual(parts["warm-ups"], 400.0)
        self.assertEqual(parts["spawn"], 30.0)
        self.assertEqual(parts["load"], 200.0 + 100.0)  # execute less spawn
        self.assertEqual(parts["trial inputs"], 40.0)
        self.assertEqual(parts["checking"], 50.0)
        self.assertEqual(parts["correctness, other"], 2 * 15.0)
        self.assertEqual(parts["timing"], 800.0)
        self.assertEqual(parts["baselines"], 90.0)
        self.assertAlmostEqual(sum(parts.values()), lane_ms)
        self.assertAlmostEqual(parts["not in a stage"],
                               2500.0 - 400 - 30 - 300 - 2 * CORRECT["ms"] - 800 - 90)

    def test_command_line_prints_every_part_and_refuses_an_unfinished_folder(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "results.json"), "w") as f:
                json.dump(self.results, f)
            with open(os.path.join(d, "verdicts.jsonl"), "w") as f:
                f.write("".join(json.dumps(l) + "\n" for l in self.lines))
            out = subprocess.run([sys.executable, SCRIPT, d, "--json"], capture_output=True,
                                 text=True, check=True).stdout
            got = json.loads(out)
            self.assertEqual(got["candidates"], 2)
            self.assertEqual(got["lane_ms_per_candidate"], 1250.0)
            self.assertEqual(sorted(got["parts_ms"]), sorted(lane_breakdown.PARTS))
            # the load's phases, each distinct candidate evaluated here once
            self.assertEqual(got["load_phases_ms"], {"device_start": 105.0 + 60.0,
                                                     "model": 52.5 + 30.0})
            table = subprocess.run([sys.executable, SCRIPT, d], capture_output=True, text=True,
                                   check=True).stdout
            self.assertIn("1250 ms per candidate", table)
            self.assertIn("not in a stage", table)
            self.assertIn("  device_start", table)
            os.remove(os.path.join(d, "verdicts.jsonl"))
            r = subprocess.run([sys.executable, SCRIPT, d], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("not a finished bench folder", r.stderr)


if __name__ == "__main__":
    unittest.main()
