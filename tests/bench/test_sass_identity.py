"""Tests for bench/sass_identity.py: run with
/usr/bin/python3 -m unittest discover -s tests/bench -p "test_*.py". The comparison of cuobjdump
output and of cubin sections, and whole runs with nvcc on small .cu files against a stand-in for
torch's include folder (skipped where nvcc is missing): identical device code is found
identical, a rewrite that changes a kernel is found to differ, and a unit that needs
torch/extension.h falls back."""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))

import sass_identity  # noqa: E402

NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"

# What `cuobjdump -sass` prints for an object (the shape of CUDA 12/13's output).
SASS = """
Fatbin elf code:
================
arch = sm_90
code version = [1,8]
host = linux
compile_size = 64bit
identifier = %s

\tcode for sm_90
\t\tFunction : _Z5scalePKfPfl
\t.headerflags\t@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x00000a00ff017b82 */
        /*0010*/                   S2R R0, SR_TID.X ;                      /* 0x0000000000007919 */
        /*0020*/                   %s ;                                    /* 0x000fe20000000f00 */
\t\t..........
"""

TYPES_H = "#pragma once\n#include <cstdint>\n"
EXTENSION_H = ("#pragma once\n#include <torch/types.h>\n#include <map>\n#include <string>\n"
               "#define KF_EXTENSION_ONLY 1\ninline std::string kf_name() { return \"x\"; }\n")
KERNEL = """#include <torch/extension.h>
__global__ void scale(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
%s
}
"""


class ParseTest(unittest.TestCase):
    def test_sass_compares_instructions_not_file_names(self):
        a = sass_identity.parse_sass(SASS % ("/tmp/a/cuda.cu", "MOV R2, 0x2"))
        b = sass_identity.parse_sass(SASS % ("/tmp/b/cuda.cu", "MOV R2, 0x2"))
        c = sass_identity.parse_sass(SASS % ("/tmp/a/cuda.cu", "MOV R2, 0x3"))
        self.assertEqual(list(a), ["sm_90 _Z5scalePKfPfl"])
        self.assertEqual(len(a["sm_90 _Z5scalePKfPfl"]), 4)  # .headerflags and 3 instructions
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)

    def test_architectures_and_cubin_command_lines(self):
        argv = ["nvcc", "-O3", "-gencode=arch=compute_80,code=sm_80", "-gencode",
                "arch=compute_90,code=[sm_90,compute_90]", "-c", "x.cu", "-o", "x.o"]
        self.assertEqual(sass_identity.real_archs(argv), ["sm_80", "sm_90"])
        self.assertEqual(sass_identity.cubin_argv(argv, "sm_90", "y.cubin"),
                         ["nvcc", "-O3", "x.cu", "-cubin", "-arch=sm_90", "-o", "y.cubin"])

    def test_artifact_folders_use_their_ninja_command_line(self):
        with tempfile.TemporaryDirectory() as t:
            art = os.path.join(t, "artifacts", "k1")
            os.makedirs(art)
            with open(os.path.join(art, "build.ninja"), "w") as f:
                f.write("nvcc = /opt/cuda/bin/nvcc\ncuda_cflags = -DX=\\\"y\\\" -O3 "
                        "-gencode=arch=compute_90,code=sm_90\ncuda_post_cflags = -std=c++17\n")
            open(os.path.join(art, "cuda.cu"), "w").close()
            os.makedirs(os.path.join(t, "artifacts", "cpu_only"))  # no build.ninja: not a unit
            [(name, cu, pre, post)] = sass_identity.units([os.path.join(t, "artifacts")], "nvcc", "")
            self.assertEqual(name, art)
            self.assertEqual(pre, ["/opt/cuda/bin/nvcc", '-DX="y"', "-O3",
                                   "-gencode=arch=compute_90,code=sm_90"])
            self.assertEqual(post, ["-std=c++17"])


class PairsTest(unittest.TestCase):
    """--pairs: the objects bench/build_cpu.py kept, compared with cuobjdump (a stand-in here
    that prints SASS whose one instruction is the object file's contents)."""

    def test_identical_and_different_builds(self):
        import json
        with tempfile.TemporaryDirectory() as t:
            bindir = os.path.join(t, "cuda", "bin")
            os.makedirs(bindir)
            fake = os.path.join(bindir, "cuobjdump")
            with open(fake, "w") as f:
                f.write("#!/usr/bin/env python3\nimport sys\nprint(%r %% (sys.argv[2], "
                        "open(sys.argv[2]).read().strip()))\n" % SASS)
            os.chmod(fake, 0o755)
            open(os.path.join(bindir, "nvcc"), "w").close()
            builds = []
            for i, (plain, light, state) in enumerate((("MOV R2, 0x2", "MOV R2, 0x2", "used"),
                                                       ("MOV R2, 0x2", "MOV R2, 0x3", "used"),
                                                       ("", "", "fell_back"))):
                dirs = {}
                for way, body in (("plain", plain), ("light", light)):
                    d = os.path.join(t, way, str(i))
                    os.makedirs(d)
                    with open(os.path.join(d, "cuda.cuda.o"), "w") as f:
                        f.write(body)
                    dirs[way + "_dir"] = d
                builds.append(dict(dirs, candidate="c%d" % i, light_headers=state, cpu_s=60,
                                   light_cpu_s=30))
            pairs = os.path.join(t, "build_cpu.json")
            with open(pairs, "w") as f:
                json.dump({"builds": builds}, f)
            out = os.path.join(t, "rows.json")
            rc = sass_identity.main(["--pairs", pairs, "--method", "sass", "--nvcc",
                                     os.path.join(bindir, "nvcc"), "--json", out])
            with open(out) as f:
                got = json.load(f)
            self.assertEqual([r["result"] for r in got["rows"]], ["identical", "differs", "fell_back"])
            self.assertEqual(got["rows"][1]["differing"], ["sm_90 _Z5scalePKfPfl"])
            self.assertEqual(got["summary"]["build_cpu_s_light"], 30)
            self.assertEqual(rc, 1)


@unittest.skipUnless(os.access(NVCC, os.X_OK), "nvcc is not installed")
class NvccTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        inc = os.path.join(self.tmp.name, "inc", "torch")
        os.makedirs(inc)
        for name, text in (("types.h", TYPES_H), ("extension.h", EXTENSION_H)):
            with open(os.path.join(inc, name), "w") as f:
                f.write(text)
        self.flags = "-O3 -std=c++17 -isystem %s -gencode=arch=compute_90,code=sm_90" % (
            os.path.dirname(inc))

    def tearDown(self):
        self.tmp.cleanup()

    def unit(self, name, body):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(body)
        return path

    def test_identical_differs_and_fell_back(self):
        same = self.unit("same.cu", KERNEL % "    if (i < n) y[i] = 2.0f * x[i];")
        # A kernel that reads a macro only torch/extension.h defines: the rewrite changes it.
        differs = self.unit("differs.cu", KERNEL % (
            "#ifdef KF_EXTENSION_ONLY\n    if (i < n) y[i] = 2.0f * x[i];\n#else\n"
            "    if (i < n) y[i] = 3.0f * x[i];\n#endif"))
        needs = self.unit("needs.cu", KERNEL % "" + "std::string name() { return kf_name(); }\n")
        plain = self.unit("plain.cu", "__global__ void k(float* y) { y[0] = 1.0f; }\n")
        out = os.path.join(self.tmp.name, "rows.json")
        rc = sass_identity.main(["--method", "cubin", "--nvcc", NVCC, "--nvcc-flags", self.flags,
                                 "--json", out, same, differs, needs, plain])
        import json
        with open(out) as f:
            rows = {os.path.basename(r["unit"]): r for r in json.load(f)["rows"]}
        self.assertEqual(rows["same.cu"]["result"], "identical", rows["same.cu"])
        self.assertGreaterEqual(rows["same.cu"]["sections"], 1)
        self.assertEqual(rows["differs.cu"]["result"], "differs")
        self.assertIn("sm_90 .text._Z5scalePKfPfl", rows["differs.cu"]["differing"])
        self.assertEqual(rows["needs.cu"]["result"], "fell_back")
        self.assertEqual(rows["plain.cu"]["result"], "unchanged")
        self.assertEqual(rc, 1)  # a difference fails the run

    def test_cubin_sections_are_read(self):
        same = self.unit("same.cu", KERNEL % "    if (i < n) y[i] = 2.0f * x[i];")
        cubin = os.path.join(self.tmp.name, "same.cubin")
        argv = sass_identity.cubin_argv([NVCC] + self.flags.split() + [same], "sm_90", cubin)
        rc, log, _ = sass_identity.run_cpu(argv, self.tmp.name)
        self.assertEqual(rc, 0, log)
        sections = sass_identity.device_sections(cubin)
        self.assertIn(".text._Z5scalePKfPfl", sections)
        self.assertGreater(len(sections[".text._Z5scalePKfPfl"]), 0)


if __name__ == "__main__":
    unittest.main()
