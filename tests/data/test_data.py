"""kforge data sft|rft|rl on recorded generate trajectories and bench verdicts (fixtures/,
written by make_fixtures.py from real CPU runs). Every expectation is worked out here from the
fixture records themselves."""
import json
import math
import os
import shutil
import statistics
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
KFORGE = os.environ.get("KFORGE_BIN", os.path.join(ROOT, "build", "kforge"))
CACHE = os.environ.get("KFORGE_TEST_CACHE") or os.path.join(tempfile.gettempdir(), "kforge-data-test-cache")
FIX = os.path.join(HERE, "fixtures")
GEN, BENCH = os.path.join(FIX, "generate"), os.path.join(FIX, "bench")
INPUTS = ["--trajectories", GEN, "--verdicts", BENCH]


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.strip()]


def conversations():
    """(name, turns sorted by turn) per fixture conversation, in path order as kforge reads them."""
    out = []
    for name in sorted(os.listdir(GEN)):
        turns = [t for t in read_jsonl(os.path.join(GEN, name, "trajectories.jsonl"))
                 if t["type"] == "turn"]
        out.append((name, sorted(turns, key=lambda t: t["turn"])))
    return out


def bench_records():
    recs = read_jsonl(os.path.join(BENCH, "verdicts.jsonl"))
    for r in recs:
        with open(os.path.join(BENCH, r["sample"])) as f:
            r["text"] = f.read()
    return recs


def speedup(v):
    return (v.get("speedup") or {}).get("vs_eager")


def ok(v):
    return v is not None and v["status"] == "ok"


def pass_at_k(n, c, k):
    k = min(k, n)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


class DataTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="kforge-data-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def data(self, mode, *args, out="out.jsonl"):
        path = os.path.join(self.tmp, out)
        r = subprocess.run([KFORGE, "data", mode, "--out", path] + list(args),
                           capture_output=True, text=True, timeout=600)
        rows = read_jsonl(path) if os.path.exists(path) else []
        return r, rows

    def test_sft_final_kernels_with_and_without_repairs(self):
        want = []  # (problem, candidate hash, prompt, final turn, conversation turns)
        seen = set()
        for name, turns in conversations():
            good = [t for t in turns if ok(t["verdict"])]
            if not good:
                continue
            best = max(good, key=lambda t: speedup(t["verdict"]) or 0)
            key = (best["verdict"]["problem"]["id"], best["verdict"]["candidate"]["hash"])
            if key not in seen:
                seen.add(key)
                want.append((key, turns[0]["messages"], best, turns))
        prompts = {t[1][1]["content"] for t in want}
        for rec in bench_records():
            key = (rec["verdict"]["problem"]["id"], rec["verdict"]["candidate"]["hash"])
            if ok(rec["verdict"]) and key not in seen:
                seen.add(key)
                want.append((key, None, rec, None))

        r, rows = self.data("sft", *INPUTS)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(len(rows), len(want))
        for row, (key, prompt, best, turns) in zip(rows, want):
            m = row["messages"]
            self.assertEqual((row["metadata"]["problem"], row["metadata"]["candidate_hash"]), key)
            self.assertEqual([x["role"] for x in m], ["system", "user", "assistant"])
            if prompt is not None:
                self.assertEqual(m[:2], prompt)
                self.assertEqual(m[2]["content"], best["reply"])
            else:  # a bench file: the prompt generate sent for the problem, the file fenced
                self.assertIn(m[1]["content"], prompts)
                self.assertEqual(m[2]["content"], "```python\n%s```" % best["text"])

        r, rows = self.data("sft", *INPUTS, "--repairs", "--reasoning", "--format", "verl")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(len(rows), len(want))
        multi = [(row, w) for row, w in zip(rows, want) if w[3] is not None and w[2]["turn"] > 1]
        self.assertTrue(multi, "the fixtures hold a conversation repaired before it passed")
        for row, (_, prompt, best, turns) in multi:
            m = row["messages"]
            self.assertEqual(row["extra_info"]["split"], "train")
            upto = [t for t in turns if t["turn"] <= best["turn"]]
            self.assertEqual(row["extra_info"]["assistant_turns"], len(upto))
            self.assertEqual(len(m), 2 + 2 * len(upto) - 1)
            task = prompt[1]["content"]
            for i, t in enumerate(upto):
                answer = m[2 + 2 * i]
                self.assertEqual(answer["role"], "assistant")
                self.assertEqual(answer["content"],
                                 "<think>\n%s\n</think>\n\n%s" % (t["reasoning"], t["reply"]))
                if i > 0:  # the feedback turn: the repair text without the task again
                    sent = t["messages"][1]["content"]
                    self.assertTrue(sent.startswith(task + "\n\n"))
                    self.assertEqual(m[1 + 2 * i], {"role": "user", "content": sent[len(task) + 2:]})
                    self.assertIn(turns[i - 1]["verdict"]["feedback"], m[1 + 2 * i]["content"])

    def pool(self):
        """Per problem: distinct ok candidates -> (fastest speedup, text)."""
        pool = {}
        for _, turns in conversations():
            for t in turns:
                if ok(t["verdict"]):
                    p = pool.setdefault(t["verdict"]["problem"]["id"], {})
                    h, s = t["verdict"]["candidate"]["hash"], speedup(t["verdict"]) or 0
                    if h not in p or s > p[h][0]:
                        p[h] = (s, t["candidate"])
        for rec in bench_records():
            if ok(rec["verdict"]):
                p = pool.setdefault(rec["verdict"]["problem"]["id"], {})
                h, s = rec["verdict"]["candidate"]["hash"], speedup(rec["verdict"]) or 0
                if h not in p or s > p[h][0]:
                    p[h] = (s, rec["text"])
        return pool

    def test_rft_threshold_and_diversity(self):
        pool = self.pool()
        speeds = [s for p in pool.values() for s, _ in p.values()]
        threshold = statistics.median(speeds)
        r, rows = self.data("rft", *INPUTS, "--min-speedup", repr(threshold), "--k", "10",
                            "--max-similarity", "1.0")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        want = {(prob, h) for prob, p in pool.items() for h, (s, _) in p.items() if s >= threshold}
        self.assertEqual({(x["metadata"]["problem"], x["metadata"]["candidate_hash"]) for x in rows},
                         want)
        for x in rows:
            self.assertGreaterEqual(x["metadata"]["speedup_vs_eager"], threshold)

        # The renamed copy of examples/cpu/relu.py is the same solution as the original: with
        # the similarity cut only one of the two is kept; the unrolled kernel is another one.
        by_name = {name: turns for name, turns in conversations()}
        original = by_name["relu_repair"][-1]["verdict"]["candidate"]["hash"]
        renamed = by_name["relu_renamed"][0]["verdict"]["candidate"]["hash"]
        unrolled = by_name["relu_unrolled"][0]["verdict"]["candidate"]["hash"]
        r, rows = self.data("rft", *INPUTS, "--min-speedup", "0", "--k", "10")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        relu = [x["metadata"] for x in rows if x["metadata"]["problem"] == "level1/relu"]
        kept = {m["candidate_hash"] for m in relu}
        self.assertEqual(len(kept & {original, renamed}), 1, relu)
        self.assertIn(unrolled, kept)
        self.assertEqual(relu[0]["speedup_vs_eager"], max(s for s, _ in pool["level1/relu"].values()))
        r, rows = self.data("rft", *INPUTS, "--min-speedup", "0", "--k", "10", "--max-similarity", "1")
        kept = {x["metadata"]["candidate_hash"] for x in rows}
        self.assertTrue({original, renamed} <= kept)
        r, rows = self.data("rft", *INPUTS, "--min-speedup", "0", "--k", "1")
        self.assertEqual(sorted(x["metadata"]["problem"] for x in rows), sorted(pool))

    def test_rl_difficulty_and_verl_rows(self):
        problems = os.path.join(self.tmp, "problems")
        for p in ("level1/relu.py", "level1/softmax.py", "level2/gemm_bias_relu.py"):
            os.makedirs(os.path.dirname(os.path.join(problems, p)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, "problems", p), os.path.join(problems, p))
        counts = {}  # problem -> [n, c]: bench records and generate turn 1, infra_error not counted
        for v in [rec["verdict"] for rec in bench_records()] + \
                 [t["verdict"] for _, turns in conversations() for t in turns if t["turn"] == 1]:
            if v is None or v["status"] == "infra_error":
                continue
            nc = counts.setdefault(v["problem"]["id"], [0, 0])
            nc[0] += 1
            nc[1] += 1 if v["status"] == "ok" else 0
        run = ["--problems", problems, "--backend", "cpu", "--python", "/usr/bin/python3",
               "--cache", CACHE]
        for k in (1, 2):
            r, rows = self.data("rl", *INPUTS, *run, "--sampled-only", "--k", str(k))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            want = sorted(counts, key=lambda p: (-pass_at_k(*counts[p], k), p))
            self.assertEqual([x["metadata"]["problem"] for x in rows], want)
            for x in rows:
                n, c = counts[x["metadata"]["problem"]]
                self.assertEqual((x["metadata"]["n"], x["metadata"]["c"]), (n, c))
                self.assertAlmostEqual(x["metadata"]["difficulty"], 1 - pass_at_k(n, c, k),
                                       places=12)
                self.assertEqual([m["role"] for m in x["messages"]], ["system", "user"])
        hardest = max(1 - c / n for n, c in counts.values())
        r, rows = self.data("rl", *INPUTS, *run, "--sampled-only", "--min-difficulty", repr(hardest))
        self.assertEqual([1 - x["metadata"]["c"] / x["metadata"]["n"] for x in rows],
                         [d for d in (1 - c / n for n, c in counts.values()) if d >= hardest])

        # verl's rows, and every --problems problem: the unsampled one last.
        r, rows = self.data("rl", *INPUTS, *run, "--format", "verl")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual([x["reward_model"]["ground_truth"] for x in rows],
                         sorted(counts, key=lambda p: (-pass_at_k(*counts[p], 1), p))
                         + ["level2/gemm_bias_relu"])
        for x in rows:
            self.assertEqual(x["data_source"], "kforge")
            self.assertEqual(x["ability"], "kernel_generation")
            self.assertEqual(x["reward_model"]["style"], "rule")
            self.assertEqual(x["extra_info"]["split"], "train")
            self.assertEqual([m["role"] for m in x["prompt"]], ["system", "user"])
        last = rows[-1]
        self.assertIsNone(last["extra_info"]["difficulty"])
        self.assertEqual(last["extra_info"]["bucket"], "unknown")
        # No generate turn recorded its prompt: made here, as generate makes it (the problem's
        # source and the shapes the judge measured).
        with open(os.path.join(problems, "level2", "gemm_bias_relu.py")) as f:
            self.assertIn(f.read().strip(), last["prompt"][1]["content"])
        self.assertIn("shape [128, 256]", last["prompt"][1]["content"])

    def test_usage_errors(self):
        r, _ = self.data("sft")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--trajectories", r.stderr)
        r, _ = self.data("rl", "--verdicts", os.path.join(self.tmp, "missing"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no such file or folder", r.stderr)


if __name__ == "__main__":
    unittest.main()
