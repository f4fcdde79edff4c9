"""bench/trainer_load.py's own logic (trainer_mix, trainer_report, trainer_kill): percentiles, the exactly-once check, expectations read
from the files' headers, the variants made from honest files, which processes a kill takes.
No server, no network, no clock."""
import os
import random
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import trainer_kill as procs  # noqa: E402
import trainer_mix as mix  # noqa: E402
import trainer_report as rep  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))

RELU = os.path.join(ROOT, "examples", "cpu", "relu.py")


def sample(name, **kw):
    s = {"sample": name, "kind": "honest", "expect": "ok", "answers": 1, "reward": 1.0,
         "status": "ok", "state": "done", "source": "x.py"}
    s.update(kw)
    return s


class Percentiles(unittest.TestCase):
    def test_nearest_rank(self):
        xs = [5.0, 1.0, 4.0, 2.0, 3.0]
        self.assertEqual(rep.percentile(xs, 50), 3.0)
        self.assertEqual(rep.percentile(xs, 99), 5.0)
        self.assertEqual(rep.percentile(xs, 20), 1.0)
        self.assertEqual(rep.percentile(xs, 21), 2.0)
        self.assertEqual(rep.percentile(list(range(1, 101)), 99), 99)
        self.assertEqual(rep.percentile([7.0], 50), 7.0)
        self.assertIsNone(rep.percentile([], 50))

    def test_latency_summary(self):
        self.assertEqual(rep.latency([1.0, 2.0, 3.0, 4.0]),
                         {"n": 4, "p50_s": 2.0, "p90_s": 4.0, "p99_s": 4.0, "max_s": 4.0})
        self.assertEqual(rep.latency([])["p50_s"], None)


class Expectations(unittest.TestCase):
    def test_headers(self):
        text = ("# kforge-problem: level2/gemm_bias_relu.py\n# kforge-expect: cheat\n"
                "# kforge-rule: H01\n# kforge-expect-kernelbench: ok\n# the trick\nimport torch\n"
                "# kforge-expect: ok\n")
        h = mix.read_headers(text)
        self.assertEqual(mix.problem_id(h), "level2/gemm_bias_relu")
        self.assertEqual(mix.expected_status(h, "strict"), "cheat")
        self.assertEqual(mix.expected_status(h, "kernelbench"), "ok")
        self.assertEqual(h["rule"], "H01")
        self.assertEqual(mix.expected_status(mix.read_headers("# kforge-expect: incorrect\n"),
                                            "kernelbench"), "incorrect")

    def test_kinds(self):
        self.assertEqual(mix.kind_of("honest", "ok"), "honest")
        self.assertIsNone(mix.kind_of("redteam", "ok"))  # allowed under kernelbench: no cheat
        self.assertEqual(mix.kind_of("redteam", "cheat"), "cheat")
        self.assertEqual(mix.kind_of("redteam", "incorrect"), "broken")
        self.assertEqual(mix.kind_of("broken", "compile_error"), "broken")

    def test_catalogue_cpu(self):
        cat = mix.catalogue(ROOT, "cpu", "strict", ["load_inline"])
        kinds = {e["kind"] for e in cat}
        self.assertEqual(kinds, {"honest", "broken", "cheat"})
        for e in cat:
            self.assertTrue(os.path.exists(os.path.join(ROOT, "problems",
                                                        e["problem"] + ".py")), e["source"])
            self.assertNotIn(os.path.basename(e["source"]), mix.SKIP)
            self.assertNotEqual(e["expect"], "timeout")
            self.assertEqual(e["kind"] == "honest", e["expect"] == "ok", e["source"])
            if e["kind"] == "cheat" and e["mutation"] == "file":
                self.assertTrue(e["source"].startswith("tests/redteam/cpu/"), e["source"])
        self.assertTrue(any(e["source"].endswith("h16_gc_scan.py") for e in cat))

    def test_variants(self):
        with open(RELU) as f:
            text = f.read()
        broken = mix.inject_compile_error(text)
        self.assertLess(broken.index("kforge_trainer_load_no_such_header.h"),
                        broken.index("#include <torch/extension.h>"))
        crash = mix.inject_crash(text)
        lines = crash.split("\n")
        i = lines.index('        raise RuntimeError("trainer_load: a crash")')
        self.assertTrue(lines[i - 1].strip().startswith("def forward(self"))
        self.assertIsNone(mix.inject_crash("class ModelNew:\n    def forward(self,\n    x):\n"))
        self.assertIsNone(mix.inject_compile_error("import triton\n"))
        patched = mix.inject_timer_patch(text)
        self.assertTrue(patched.startswith("# kforge-problem: level1/relu.py\n"))
        self.assertIn("time.perf_counter = lambda", patched)

    def test_plan_and_render(self):
        cat = mix.catalogue(ROOT, "cpu", "strict", ["load_inline"])
        problems = mix.choose_problems(cat, 3, 0, 1)
        self.assertEqual(problems[0], "level1/relu")
        self.assertEqual(len(set(problems)), 3)
        self.assertNotEqual(problems, mix.choose_problems(cat, 3, 1, 1))
        rng = random.Random(3)
        groups = mix.plan_step(cat, problems, 16, rng, [0.4, 0.3, 0.3])
        self.assertEqual([g["problem"] for g in groups], problems)
        for g in groups:
            self.assertEqual(len(g["samples"]), 16)
            self.assertTrue(all(s["problem"] == g["problem"] for s in g["samples"]))
        texts = [mix.render(s, "n%d" % i, rng) for i, s in enumerate(groups[0]["samples"])]
        self.assertEqual(len(set(texts)), 16)
        self.assertTrue(all("# trainer_load n" in t or "(n" in t for t in texts))


class ExactlyOnce(unittest.TestCase):
    def test_clean(self):
        ss = [sample("a", id="1", evaluated_sha256="h1", verdict_candidate_sha256="h1"),
              sample("b", id="2"), sample("c", route="openrlhf")]
        self.assertEqual(rep.check_exactly_once(ss), [])

    def test_lost_duplicated_and_mixed_up(self):
        ss = [sample("a", answers=0), sample("b", answers=2), sample("c", id="7"),
              sample("d", id="7"), sample("e", evaluated_sha256="h1",
                                         verdict_candidate_sha256="h2")]
        bad = rep.check_exactly_once(ss)
        self.assertEqual(len(bad), 4, bad)
        self.assertIn("a: 0 answers", bad)
        self.assertIn("b: 2 answers", bad)
        self.assertTrue(any("c and d share job" in b for b in bad))
        self.assertTrue(any("e: the verdict is about another text" in b for b in bad))

    def test_settled(self):
        self.assertTrue(rep.settled(sample("a")))
        self.assertTrue(rep.settled(sample("a", reward=None, status="infra_error")))
        self.assertTrue(rep.settled(sample("a", reward=None, status=None, state="lost")))
        self.assertTrue(rep.settled(sample("a", reward=None, status=None, no_reward=1.0,
                                          state=None)))
        self.assertFalse(rep.settled(sample("a", reward=None, status=None, state="running")))
        self.assertFalse(rep.settled(sample("a", reward=None, status=None, state="queued",
                                           no_reward=1.0)))
        self.assertFalse(rep.settled(sample("a", reward=None, status=None, state="unfinished",
                                            no_reward=1.0)))

    def test_rewarded_wrongly_and_table(self):
        ss = [sample("a"), sample("b", kind="cheat", expect="cheat", status="ok", reward=1.2),
              sample("c", kind="cheat", expect="cheat", status="cheat", reward=-1.0),
              sample("d", kind="broken", expect="incorrect", status=None, reward=None)]
        self.assertEqual([s["sample"] for s in rep.rewarded_wrongly(ss)], ["b"])
        t = rep.expectation_table(ss)
        self.assertEqual(t["cheat"]["cheat"], {"ok": 1, "cheat": 1})
        self.assertEqual(t["broken"]["incorrect"], {"no_reward": 1})

    def test_verdicts_written(self):
        delta = {'kforge_verdicts_total{status="ok"}': 2.0, 'kforge_verdicts_total{status="cheat"}':
                 1.0, "kforge_group_samples_total": 9.0}
        ss = [sample("a"), sample("b"), sample("c", worker="store"), sample("d", worker="gpu-1")]
        self.assertEqual(rep.verdicts_written(delta, ss), (3, 3))

    def test_kill_outcome(self):
        ss = [sample("a", deliveries=2), sample("b", status="infra_error", reward=None),
              sample("c", route="openrlhf", status=None, reward=None, no_reward=1.0),
              sample("d", status=None, reward=None, state="queued")]
        k = rep.kill_outcome({"killed": [5], "what": "w", "at_s": 3.0}, ss)
        self.assertEqual((k["retried"], k["infra_error"], k["unsettled"]), (1, 2, 1))
        self.assertIn("killed w at 3.0 s", k["outcome"])
        self.assertIsNone(rep.kill_outcome(None, ss))


class KillPlan(unittest.TestCase):
    K = "/x/.devnet/kforge"
    PY = ["python3", "-X", "faulthandler", "-m"]

    def table(self):
        return {
            1: (0, ["init"]),
            10: (1, [self.K, "serve", "--port", "8123", "--redis", "redis://h"]),
            20: (1, [self.K, "worker", "--role", "build", "--redis", "redis://h"]),
            30: (1, [self.K, "worker", "--role", "gpu", "--redis", "redis://h"]),
            31: (30, self.PY + ["kforge_runner.judge", "--fd", "3"]),
            32: (30, self.PY + ["kforge_runner.zygote", "--fd", "3"]),
            33: (32, self.PY + ["kforge_runner.zygote", "--fd", "3"]),  # a candidate
            40: (1, [self.K, "serve", "--port=9000"]),
            41: (40, self.PY + ["kforge_runner.build_worker", "--fd", "3"]),
            42: (40, self.PY + ["kforge_runner.judge", "--fd", "3"]),
            43: (40, self.PY + ["kforge_runner.zygote", "--fd", "3"]),
            44: (40, self.PY + ["kforge_runner.judge", "--fd", "3"]),
            45: (40, self.PY + ["kforge_runner.zygote", "--fd", "3"]),
            46: (43, self.PY + ["kforge_runner.zygote", "--fd", "3"]),
            50: (1, ["python3", "bench/trainer_load.py", "--kill-worker-after-s", "3"]),
            # another service's worker on the same machine (a shared machine): never taken
            60: (1, [self.K, "worker", "--redis=redis://other", "--role", "gpu"]),
        }

    def test_redis_takes_the_gpu_worker_and_its_tree(self):
        t = self.table()
        what, pids = procs.kill_plan(t, "redis", 8123)
        self.assertEqual(sorted(pids), [30, 31, 32, 33])
        self.assertIn("pid 30", what)
        self.assertTrue(procs.busy(t, pids))
        self.assertEqual(procs.gpu_workers(t, "redis://other"), [60])
        self.assertEqual(procs.gpu_workers({1: (0, [self.K, "worker", "--role=gpu", "--redis",
                                                 "r"])}, "r"), [1])

    def test_embedded_takes_one_lane(self):
        t = self.table()
        what, pids = procs.kill_plan(t, "embedded", 9000)
        self.assertEqual(sorted(pids), [42, 43, 46])
        self.assertTrue(procs.busy(t, pids))
        del t[46]
        self.assertFalse(procs.busy(t, procs.kill_plan(t, "embedded", 9000)[1]))

    def test_nothing_to_kill(self):
        t = self.table()
        self.assertEqual(procs.kill_plan(t, "embedded", 7777)[1], [])
        self.assertEqual(procs.serve_on_port({1: (0, [self.K, "serve"])}, 8000), 1)
        self.assertEqual(procs.kill_plan(t, "redis", 7777)[1], [])  # no service there
        del t[30]
        self.assertEqual(procs.kill_plan(t, "redis", 8123)[1], [])
        self.assertEqual(procs.flag(["k", "--port", "1", "--port=2"], "--port"), "2")
        self.assertIsNone(procs.flag(["k", "--portx", "1"], "--port"))

    def test_descendants(self):
        self.assertEqual(sorted(procs.descendants(self.table(), 40)), [41, 42, 43, 44, 45, 46])


if __name__ == "__main__":
    unittest.main()
