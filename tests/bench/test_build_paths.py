"""bench/build_paths.py: a bench's build CPU by the path each build took, a candidate once."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "build_paths.py")


def line(cand, status, cpu_ms, split, light):
    build = {"name": "build", "cpu_ms": cpu_ms, "split_build": split, "light_headers": light}
    return json.dumps({"verdict": {"candidate": {"hash": cand}, "status": status,
                                   "stages": [{"name": "extract"}, build]}})


class BuildPathsTest(unittest.TestCase):
    def tmp(self):
        d = tempfile.TemporaryDirectory(prefix="kforge-build-paths.")
        self.addCleanup(d.cleanup)
        return d.name

    def run_on(self, *benches):
        tmp = self.tmp()
        dirs = []
        for i, lines in enumerate(benches):
            d = os.path.join(tmp, "bench-%d" % i)
            os.makedirs(d)
            with open(os.path.join(d, "verdicts.jsonl"), "w") as f:
                f.write("\n".join(lines) + "\n")
            dirs.append(d)
        r = subprocess.run([sys.executable, SCRIPT, "--json"] + dirs, capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_paths_are_grouped_and_a_candidate_counts_once(self):
        out = self.run_on(
            [line("a", "compile_error", 50000, "fell_back", "fell_back"),
             line("b", "compile_error", 40000, "fell_back", "fell_back"),
             line("c", "ok", 10000, "used", "unchanged"),
             line("d", "ok", 0, "used", "unchanged")],  # a cache hit: no compile
            [line("a", "compile_error", 50000, "fell_back", "fell_back")])  # the store's again
        self.assertEqual(out["builds"], 3)
        self.assertEqual(out["total_cpu_s"], 100.0)
        self.assertEqual(out["compile_error_cpu_s"], 90.0)
        first = out["paths"][0]
        self.assertEqual((first["path"], first["compile_error"], first["builds"]),
                         ("split fell_back, light fell_back", True, 2))
        self.assertEqual((first["median_cpu_s"], first["total_cpu_s"], first["share"]),
                         (45.0, 90.0, 0.9))
        self.assertEqual(out["paths"][1]["path"], "split used, light unchanged")

    def test_nothing_compiled_is_a_clear_error(self):
        tmp = self.tmp()
        with open(os.path.join(tmp, "verdicts.jsonl"), "w") as f:
            f.write(line("a", "ok", 0, "used", "unchanged") + "\n")
        r = subprocess.run([sys.executable, SCRIPT, tmp], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no build that compiled", r.stderr)


if __name__ == "__main__":
    unittest.main()
