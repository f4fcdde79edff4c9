"""bench/corpus_agreement.py compare: every disagreement in issue 28's fixed classes, with its
evidence, and the per-source and trusted-source agreement with policy differences set aside."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "corpus_agreement.py")

CORRECT = {"compiled": True, "correct": True}
INCORRECT = {"compiled": True, "correct": False, "correctness_issue": "Output mismatch"}


def trial(label, ok, err=0.0):
    return {"label": label, "pass": ok, "max_abs_err": err, "max_rel_err": err * 10}


def verdict(status, diags=(), trials=None, policy="kernelbench"):
    stages = [] if trials is None else [{"name": "correctness", "trials": trials}]
    return {"status": status, "policy": policy, "diagnostics": list(diags), "stages": stages}


def error(code, message, stage="correctness"):
    return {"code": code, "message": message, "severity": "error", "stage": stage}


def mismatch(atol):
    return error("mismatch", "trial 2, output 0: 10 of 100 elements differ; max abs error 0.5 "
                             "(atol %g, rtol %g)" % (atol, atol))


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.corpus = os.path.join(self.tmp.name, "corpus")
        self.manifests, self.benches = {}, {}

    def tearDown(self):
        self.tmp.cleanup()

    def sample(self, source, name, recorded, v, bench="run", patterns=None):
        """One corpus sample (a distinct file) and its verdict in bench folder `bench`."""
        rel = os.path.join("level1", name, "sample_0.py")
        path = os.path.join(self.corpus, "samples", source, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("# %s %s\n" % (source, name))  # distinct content: its own kernel
        rows = self.manifests.setdefault(source, [])
        if not any(r["path"] == rel for r in rows):
            rows.append({"level": "level1", "problem": name, "sample": 0, "path": rel,
                         "recorded": recorded, "patterns": patterns or {}})
        self.benches.setdefault(bench, {}).setdefault(source, []).append(
            {"sample": path, "verdict": v})

    def compare(self, *extra, expect_rc=0):
        for source, rows in self.manifests.items():
            with open(os.path.join(self.corpus, "samples", source, "manifest.jsonl"), "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in rows)
        args = []
        for bench, by_source in self.benches.items():
            for source, lines in by_source.items():
                d = os.path.join(self.tmp.name, bench, source)
                os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, "verdicts.jsonl"), "w") as f:
                    f.writelines(json.dumps(line) + "\n" for line in lines)
            flag = "--bench" if bench == "run" else "--other-policy-bench"
            args += [flag, os.path.join(self.tmp.name, bench)]
        out = os.path.join(self.tmp.name, "agreement")
        p = subprocess.run([sys.executable, SCRIPT, "compare", "--corpus", self.corpus,
                            "--out", out] + args + list(extra), capture_output=True, text=True)
        self.assertEqual(p.returncode, expect_rc, p.stderr)
        if expect_rc:
            return p.stderr, None
        with open(out + ".jsonl") as f:
            rows = {r["problem"]: r for r in map(json.loads, f)}
        with open(out + ".md") as f:
            return f.read(), rows

    def test_each_disagreement_gets_its_class_and_evidence(self):
        s = "kb-fork-runs"
        self.sample(s, "agrees", CORRECT, verdict("ok"))
        self.sample(s, "tf32", CORRECT, verdict("cheat", [error(
            "H13", "using torch.backends.cuda.matmul.allow_tf32 is not allowed", "static")]))
        self.sample(s, "fallback", CORRECT, verdict("compile_error", [error(
            "compile_error", "main.cpp:4: ‘relu_kernel’ was not declared in this scope",
            "build")]), patterns={"try_guarded_build": True})
        self.sample(s, "wrong_own", CORRECT, verdict(
            "incorrect", [mismatch(1e-2)],
            [trial("seed 1", True, 1e-6), trial("seed 2", False, 0.5)]))
        self.sample(s, "wrong_signed", CORRECT, verdict(
            "incorrect", [mismatch(1e-2)],
            [trial("seed 1", True), trial("signed inputs", False, 0.11)]))
        self.sample(s, "tolerance", CORRECT, verdict(
            "incorrect", [mismatch(1e-4)], [trial("seed 1", False, 0.004)]))
        self.sample(s, "old_api", CORRECT, verdict("compile_error", [error(
            "compile_error", "no suitable conversion function from \"const "
            "at::DeprecatedTypeProperties\" to \"c10::ScalarType\" exists", "build")]))
        self.sample(s, "accepted", INCORRECT, verdict("ok"))
        self.sample(s, "ctypes", CORRECT, verdict("cheat", [error(
            "H16", "importing ctypes (raw memory access) is not allowed (H16)", "static")]))
        self.sample(s, "replay", CORRECT, verdict("cheat", [error(
            "H06", "after a few input values were swapped, the outputs were those of the "
            "inputs before the swap")]))
        self.sample(s, "their_oom", dict(INCORRECT, environment_failure="out_of_memory"),
                    verdict("ok"))
        # Their build failed; it builds here and is wrong: no check of theirs passed it.
        self.sample(s, "builds_here_wrong", {"compiled": False, "correct": False,
                                             "compilation_error": "nvcc: error 2"}, verdict(
            "incorrect", [mismatch(1e-2)], [trial("seed 1", False, 1.3)]))
        # Their build failed; it builds here and faults: the source never ran it, so no run of
        # theirs went without the fault (2026-12-07: kb-fork-runs' 34_InstanceNorm sample 0).
        self.sample(s, "builds_here_faults", {"compiled": False, "correct": False}, verdict(
            "runtime_error", [error("cuda_error", "correctness trial 1 raised AcceleratorError: "
                                    "CUDA error: an illegal memory access was encountered",
                                    "correctness")]))
        text, rows = self.compare()
        want = {"agrees": "", "tf32": "policy", "fallback": "harness", "wrong_own": "harness",
                "wrong_signed": "kforge", "tolerance": "version", "old_api": "environment",
                "accepted": "kforge", "ctypes": "policy", "replay": "harness",
                "builds_here_wrong": "environment", "builds_here_faults": "environment"}
        self.assertEqual({p: r["class"] for p, r in rows.items()}, want)
        self.assertNotIn("their_oom", rows)  # their machine's failure: left out, counted
        self.assertIn("'their machine': 1", text)
        self.assertTrue(rows["agrees"]["agrees"])
        self.assertIn("seed 2: max abs err 0.5", rows["wrong_own"]["evidence"])
        self.assertIn("signed inputs", rows["wrong_signed"]["evidence"])
        self.assertIn("not declared in this scope", rows["fallback"]["evidence"])
        self.assertIn("stage static", rows["tf32"]["evidence"])
        self.assertIn("Output mismatch", rows["accepted"]["evidence"])
        evidence = rows["builds_here_wrong"]["evidence"]
        self.assertIn("the source's build failed", evidence)
        self.assertIn("here it runs and is incorrect", evidence)
        self.assertNotIn("check passed it", evidence)
        self.assertIn("here it runs and is runtime_error: cuda_error: correctness trial 1 raised",
                      rows["builds_here_faults"]["evidence"])
        # 1 agrees of 12; H13 and ctypes are set aside: 1 of 10. Two kforge rows are reported.
        self.assertIn("| kb-fork-runs | 12 | 1 | 8.3 | 10.0 | 3 | 2 | 1 | 3 | 2 |", text)
        self.assertIn("kforge errors or unexplained: **2**", text)
        self.assertIn("| kforge | wrong only on kforge's trials | kb-fork-runs | level1/"
                      "wrong_signed |", text)

    def test_the_target_is_read_on_trusted_sources_with_policy_set_aside(self):
        for i in range(30):
            self.sample("kb-leaderboard", "p%d" % i, CORRECT, verdict("ok"))
        self.sample("kb-leaderboard", "half", CORRECT,
                    verdict("cheat", [error("H13", "casting with .half() downgrades fp32")]))
        # An untrusted source's disagreements do not move the trusted figure.
        for i in range(5):
            self.sample("cuda-l1", "c%d" % i, CORRECT, verdict("cheat", [error(
                "H02", "ModelNew.forward never called a function of the candidate's own "
                "extension")]))
        text, _ = self.compare()
        self.assertIn("**100.0%, met**", text)
        self.sample("kb-fork-runs", "broken", CORRECT, verdict("timeout"))
        text, rows = self.compare()
        self.assertIn("**96.8%, not met**", text)  # 30 of 31 once H13 is set aside
        self.assertEqual(rows["c0"]["class"], "harness")

    def test_strict_only_rules_are_policy_only_where_kernelbench_accepts(self):
        h01 = error("H01", "forward calls torch.relu", "correctness")
        self.sample("metr", "beside", CORRECT, verdict("cheat", [h01], policy="strict"))
        self.sample("metr", "beside", CORRECT, verdict("ok"), bench="other")
        self.sample("metr", "both", CORRECT, verdict("cheat", [h01], policy="strict"))
        self.sample("metr", "both", CORRECT, verdict("cheat", [error(
            "H02", "ModelNew.forward never called a function of the candidate's own extension",
            "runtime")]), bench="other")
        self.sample("metr", "graph", CORRECT, verdict("cheat", [h01], policy="strict"))
        self.sample("metr", "graph", CORRECT, verdict("cheat", [error(
            "H07", "using torch.cuda.CUDAGraph (CUDA graphs) is not allowed", "static")]),
            bench="other")
        text, rows = self.compare()
        self.assertEqual(rows["beside"]["class"], "policy")
        self.assertIn("under kernelbench: ok", rows["beside"]["evidence"])
        # kernelbench says cheat too: its own reason, as its report classifies it, explains both.
        self.assertEqual(rows["both"]["class"], "harness")
        self.assertEqual(rows["both"]["category"], "cheat H02")
        self.assertIn("under kernelbench too: a rule kforge enforces", rows["both"]["evidence"])
        self.assertIn("under strict: H01: forward calls torch.relu", rows["both"]["evidence"])
        self.assertEqual(rows["graph"]["class"], "policy")
        self.assertIn("Python's CUDA graph APIs", rows["graph"]["evidence"])
        self.assertIn("Policy: strict (3)", text)

    def test_a_ruling_replaces_the_class_and_keeps_its_evidence(self):
        self.sample("kb-fork-runs", "crash", CORRECT, verdict("runtime_error", [error(
            "exception", "correctness trial 1 raised RuntimeError: CUDA error: an illegal "
            "memory access was encountered")]))
        _, rows = self.compare()
        self.assertEqual(rows["crash"]["class"], "kforge")
        rulings = os.path.join(self.tmp.name, "rulings.jsonl")
        with open(rulings, "w") as f:
            f.write(json.dumps({"source": "kb-fork-runs", "path": "level1/crash/sample_0.py",
                                "class": "harness", "evidence": "compute-sanitizer: read "
                                "past the end at [4096]"}) + "\n")
        text, rows = self.compare("--rulings", rulings)
        self.assertEqual(rows["crash"]["class"], "harness")
        self.assertIn("ruling: compute-sanitizer", rows["crash"]["evidence"])
        self.assertIn("kforge errors or unexplained: **0**", text)
        with open(rulings, "w") as f:
            f.write(json.dumps({"source": "kb-fork-runs", "path": "level1/crash/sample_0.py",
                                "class": "fine"}) + "\n")
        err, _ = self.compare("--rulings", rulings, expect_rc=1)
        self.assertIn("a ruling needs a class", err)

    def test_the_report_names_the_judge_that_gave_the_verdicts(self):
        self.sample("kb-fork-runs", "agrees", CORRECT, verdict("ok"))
        text, _ = self.compare("--judge", "pinned at cca2e7e 2026-12-07")
        self.assertIn("Judge: pinned at cca2e7e 2026-12-07", text.split("## Per source")[0])
        text, _ = self.compare()
        self.assertNotIn("Judge:", text)


if __name__ == "__main__":
    unittest.main()
