"""Tests for kforge_runner.light_headers and the build worker's light-headers builds: run with
/usr/bin/python3 -m unittest discover -s tests/runner. The worker's builds use a stand-in for
torch's builder that compiles cuda.cu as C++ with g++ against a small stand-in of torch's
include folder, so they need no torch and no nvcc and take seconds."""
import os
import subprocess
import sys
import types
import unittest
import json

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

from kforge_runner import build_worker, light_headers  # noqa: E402
from worker_case import WorkerCase  # noqa: E402  (tests/runner)

EXT = "#include <torch/extension.h>"
LIGHT = light_headers.LIGHT_LINE


class RewriteTest(unittest.TestCase):
    def test_only_the_first_include_is_rewritten(self):
        src = EXT + "\nint a;\n" + EXT + "\n"
        self.assertEqual(light_headers.rewrite([src]), [LIGHT + "\nint a;\n" + EXT + "\n"])

    def test_in_a_later_source_and_the_quoted_spelling(self):
        srcs = ["int a;\n", '  #  include "torch/extension.h" // the API\nint b;\n']
        self.assertEqual(light_headers.rewrite(srcs),
                         ["int a;\n", "  " + LIGHT + " // the API\nint b;\n"])

    def test_untouched_when_absent(self):
        for srcs in ([], [""], ["#include <torch/types.h>\n"], ["#include <torch/extension.hpp>\n"],
                     ["#include <mytorch/extension.h>\n"]):
            self.assertIsNone(light_headers.rewrite(srcs), srcs)

    def test_comments_and_strings_are_not_includes(self):
        cases = [
            "// " + EXT + "\n",
            "/* note:\n" + EXT + "\n*/\n",
            'const char* s = "\\\n' + EXT + '";\n',  # a string continued over a splice
            'const char* s = R"x(\n' + EXT + '\n)x";\n',
            'auto s = u8R"(\n' + EXT + '\n)";\n',
            "#define INC \\\n" + EXT + "\n",  # the next line continues a directive
        ]
        for src in cases:
            self.assertIsNone(light_headers.rewrite([src]), src)
        # ... and after them, the real one is found
        src = "/* " + EXT + " */\n" + 'const char* s = R"(\n' + EXT + '\n)";\n' + EXT + "\nint x;\n"
        out = light_headers.rewrite([src])[0]
        self.assertTrue(out.endswith(LIGHT + "\nint x;\n"), out)
        self.assertEqual(out.count(EXT), 2)

    def test_digit_separators_and_char_literals_do_not_hide_a_line(self):
        src = "int n = 1'000;\nchar q = '\"';\n" + EXT + "\n"
        self.assertEqual(light_headers.rewrite([src]), ["int n = 1'000;\nchar q = '\"';\n" + LIGHT + "\n"])

    def test_line_numbers_do_not_move(self):
        src = "// kernel\n" + EXT + "\n#include <ATen/cuda/CUDAContext.h>\n__global__ void k() {}\n"
        out = light_headers.rewrite([src])[0]
        self.assertEqual(out.count("\n"), src.count("\n"))
        self.assertEqual(out.splitlines()[3], "__global__ void k() {}")


class PlanTest(unittest.TestCase):
    def spec(self, cuda):
        return {"name": "x", "cpp_sources": ["int f();"], "cuda_sources": cuda}

    def test_rewrites_and_keeps_the_rest_of_the_spec(self):
        state, spec, why = light_headers.plan(self.spec([EXT + "\nint f() { return 1; }\n"]), lambda: set())
        self.assertEqual(state, "rewrite")
        self.assertEqual(spec["cuda_sources"], [LIGHT + "\nint f() { return 1; }\n"])
        self.assertEqual(spec["cpp_sources"], ["int f();"])
        self.assertIsNone(why)

    def test_a_conditional_on_a_macro_of_extension_h_is_built_as_written(self):
        src = EXT + "\n#if TORCH_VERSION_MAJOR >= 2 // new API\nint f();\n#endif\n"
        state, spec, why = light_headers.plan(self.spec([src]), lambda: {"TORCH_VERSION_MAJOR"})
        self.assertEqual((state, spec), ("as_written", None))
        self.assertIn("TORCH_VERSION_MAJOR", why)
        # its own guard and CUDA's macros are fine
        src = EXT + "\n#ifndef MY_GUARD\n#define MY_GUARD\n#if defined(__CUDA_ARCH__)\n#endif\n#endif\n"
        self.assertEqual(light_headers.plan(self.spec([src]), lambda: {"TORCH_VERSION_MAJOR"})[0],
                         "rewrite")
        # a conditional in a comment tests nothing
        src = EXT + "\n// #ifdef TORCH_VERSION_MAJOR\n"
        self.assertEqual(light_headers.plan(self.spec([src]), lambda: {"TORCH_VERSION_MAJOR"})[0],
                         "rewrite")

    def test_unknown_macros_mean_as_written_and_no_include_means_unchanged(self):
        self.assertEqual(light_headers.plan(self.spec([EXT + "\n"]), lambda: None)[0], "as_written")
        asked = []
        state = light_headers.plan(self.spec(["int f();\n"]), lambda: asked.append(1))[0]
        self.assertEqual(state, "unchanged")
        self.assertEqual(asked, [])  # the macros are only looked up when there is an include
        self.assertEqual(light_headers.plan({"name": "x", "cpp_sources": [EXT]}, lambda: set())[0],
                         "unchanged")


# A stand-in for torch's include folder: types.h is the light part, extension.h adds an API and
# a version macro beyond it.
TYPES_H = "#pragma once\ninline int kf_types_only() { return 1; }\n"
EXTENSION_H = ("#pragma once\n#include <torch/types.h>\n#define KF_TORCH_VERSION_MAJOR 2\n"
               "inline int kf_extension_only() { return 2; }\n")


class FakeBuilder:
    """torch.utils.cpp_extension's load_inline for the worker's tests: writes cuda.cu as torch
    does (load_inline's three includes, then the CUDA sources) and compiles it with g++ as C++
    against the stand-in folder, so whatever the light rewrite changes is really compiled."""

    def __init__(self, include):
        self.include = include
        self.cuda_texts = []

    def include_paths(self, cuda=False):
        return [self.include]

    def library_paths(self, cuda=False):
        return [self.include]

    def load_inline(self, name, cpp_sources, cuda_sources=None, build_directory=None, **kwargs):
        text = "\n".join(["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"]
                         + list(cuda_sources or []))
        with open(os.path.join(build_directory, "cuda.cu"), "w") as f:
            f.write(text)
        r = subprocess.run(["g++", "-x", "c++", "-std=c++17", "-isystem", self.include, "-c",
                            "cuda.cu", "-o", "cuda.o"], cwd=build_directory,
                           capture_output=True, text=True)
        print(r.stdout + r.stderr)  # the build log, as torch's ninja output is
        if r.returncode != 0:
            raise RuntimeError("Error building extension '%s':\n%s" % (name, r.stderr))
        so = os.path.join(build_directory, name + ".so")
        open(so, "w").close()
        return types.SimpleNamespace(__file__=so, __name__=name)


class WorkerTest(WorkerCase):
    HEADERS = {"torch/types.h": TYPES_H, "torch/extension.h": EXTENSION_H, "cuda.h": "",
               "cuda_runtime.h": ""}

    def make_builder(self, include):
        return FakeBuilder(include)

    def build(self, cuda_source, light=True):
        d = self.artifact_dir()
        msg = {"op": "build", "dir": d, "pch_dir": "", "light_headers": light,
               "light_dir": os.path.join(self.tmp.name, "light"),
               "spec": {"name": "kf_ext", "cpp_sources": ["int f();"], "cuda_sources": [cuda_source],
                        "functions": ["f"]}}
        result = build_worker.build(self.chan, msg)
        with open(os.path.join(d, "cuda.cu")) as f:
            built = f.read()
        return result, built, d

    def test_a_source_that_compiles_without_extension_h_is_built_light(self):
        src = EXT + "\nint f() { return kf_types_only(); }\n"
        r, built, _ = self.build(src)
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["light_headers"], "used")
        self.assertNotIn("torch/extension.h", built)
        self.assertEqual(r["module_name"], "kf_ext")
        self.assertEqual(r["layout"]["cuda.cu"], [4])  # where the candidate's source starts

    def test_a_source_that_needs_extension_h_falls_back_and_builds_as_written(self):
        src = EXT + "\nint f() { return kf_extension_only(); }\n"
        r, built, d = self.build(src)
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["light_headers"], "fell_back")
        self.assertIn("kf_extension_only", r["light_headers_why"])
        self.assertIn(EXT, built)  # the artifact is the build as written
        self.assertEqual(r["module_name"], "kf_ext")  # no second name from a second load_inline
        with open(os.path.join(d, "light-attempt.log")) as f:
            self.assertIn("kf_extension_only", f.read())
        self.assertGreaterEqual(r["cpu_s"], r["light_headers_cpu_s"])  # both attempts count
        self.assertGreater(r["light_headers_cpu_s"], 0)

    def test_a_test_of_an_extension_h_macro_is_built_as_written(self):
        src = EXT + "\n#ifdef KF_TORCH_VERSION_MAJOR\nint f() { return 2; }\n#else\nint f() { return 1; }\n#endif\n"
        r, built, _ = self.build(src)
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["light_headers"], "fell_back")
        self.assertIn("KF_TORCH_VERSION_MAJOR", r["light_headers_why"])
        self.assertIn(EXT, built)
        # found once, then read from the cache folder
        cached = [n for n in os.listdir(os.path.join(self.tmp.name, "light")) if n.endswith(".json")]
        self.assertEqual(len(cached), 1)
        with open(os.path.join(self.tmp.name, "light", cached[0])) as f:
            self.assertIn("KF_TORCH_VERSION_MAJOR", json.load(f))

    def test_a_candidates_own_error_falls_back_and_fails_as_written(self):
        r, built, _ = self.build(EXT + "\nint f() { return undeclared_thing; }\n")
        self.assertFalse(r["ok"])
        self.assertEqual(r["light_headers"], "fell_back")
        self.assertIn(EXT, built)
        self.assertIn("undeclared_thing", r["message"])  # the as-written build's own message
        self.assertIn("toolchain", r)  # what a failure as written reports

    def test_nothing_to_rewrite_and_off(self):
        r, built, _ = self.build("int f() { return kf_types_only(); }\n")
        self.assertEqual((r["ok"], r["light_headers"]), (True, "unchanged"))
        r, built, _ = self.build(EXT + "\nint f() { return kf_types_only(); }\n", light=False)
        self.assertTrue(r["ok"])
        self.assertNotIn("light_headers", r)
        self.assertIn(EXT, built)


if __name__ == "__main__":
    unittest.main()
