"""Tests for kforge_runner.bindings and the build worker's cached bindings: run with
/usr/bin/python3 -m unittest discover -s tests/runner. The plan tests need nothing but torch's
own load_inline (whose main.cpp the plan must read exactly); the worker's builds compile with g++
against a small stand-in of torch's include folder whose PYBIND11_MODULE hands out the bound
function, link with nothing left undefined, and call it through ctypes."""
import ctypes
import inspect
import json
import os
import subprocess
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

from kforge_runner import bindings, build_worker  # noqa: E402
from worker_case import WorkerCase  # noqa: E402  (tests/runner)

RELU = """#include <torch/extension.h>
// a comment naming torch::nn does not count
torch::Tensor relu_forward(torch::Tensor x) {
    return x.clamp_min(0);
}
"""


def main_of(cpp, functions, handling=True):
    """main.cpp as load_inline writes it."""
    return "\n".join(["#include <torch/extension.h>", cpp] + bindings.module_def(functions, handling))


class PlanTest(unittest.TestCase):
    def plan(self, cpp, functions=("relu_forward",), **kw):
        return bindings.plan(main_of(cpp, list(functions)), list(functions), **kw)

    def test_host_keeps_every_line_on_torch_types_and_bindings_declare_the_function(self):
        state, host, text = self.plan(RELU)
        self.assertEqual(state, "split")
        main = main_of(RELU, ["relu_forward"])
        self.assertEqual(host.split("\n")[:2], ["#include <torch/types.h>", "#include <torch/types.h>"])
        # Every line of the candidate's code stays on its line: compiler messages point where
        # load_inline's main.cpp would.
        lines = host.split("\n")
        mark = lines.index("// kforge cached bindings: what the shared bindings unit binds, by number")
        self.assertEqual(lines[2:mark], main.split("\n")[2:mark])
        self.assertTrue(main.split("\n")[mark].startswith("PYBIND11_MODULE"))
        self.assertNotIn("PYBIND11_MODULE", host)
        # The bindings bind a numbered forwarder; its name and docstring are the host's.
        hidden = '__attribute__((visibility("hidden")))'
        self.assertEqual(text, "#include <torch/extension.h>\n"
                               "%s torch::Tensor kforge_fn_0(torch::Tensor);\n"
                               "extern %s const char* const kforge_fn_names[1];\n"
                               "extern %s const char* const kforge_fn_docs[1];\n"
                               "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
                               "m.def(kforge_fn_names[0], "
                               "torch::wrap_pybind_function(kforge_fn_0), kforge_fn_docs[0]);\n"
                               "}\n" % (hidden, hidden, hidden))
        tail = host.split("\n")[host.split("\n").index(
            "// kforge cached bindings: what the shared bindings unit binds, by number") + 1:]
        self.assertEqual(tail[0], "%s torch::Tensor kforge_fn_0(torch::Tensor a0) { return "
                                  "relu_forward(std::forward<torch::Tensor>(a0)); }" % hidden)
        self.assertIn('%s const char* const kforge_fn_names[1] = {"relu_forward"};' % hidden, tail)
        self.assertIn('%s const char* const kforge_fn_docs[1] = {"relu_forward"};' % hidden, tail)

    def test_the_bindings_of_other_names_with_the_same_signatures_are_one_text(self):
        other = RELU.replace("relu_forward", "my_relu")
        a, b = self.plan(RELU)[2], self.plan(other, ["my_relu"])[2]
        self.assertEqual(a, b)
        self.assertNotEqual(a, self.plan(RELU.replace("torch::Tensor x)", "torch::Tensor x, "
                                                      "double s)"))[2])
        # A docstring is the host's too.
        main = main_of(RELU, {"relu_forward": "the doc"})
        state, host, text = bindings.plan(main, {"relu_forward": "the doc"})
        self.assertEqual((state, text), ("split", a))
        self.assertIn('kforge_fn_docs[1] = {"the doc"};', host)

    def test_a_macro_whose_braces_balance_does_not_stop_the_split(self):
        cpp = ("#define CHECK(x) do { TORCH_CHECK((x).numel() > 0, \"empty\"); } while (0)\n"
               "#define TWICE(x) \\\n  do { (x) = (x) * 2; } while (0)\n" + RELU)
        self.assertEqual(self.plan(cpp)[0], "split")

    def test_defaults_are_left_out_and_a_prior_declaration_must_agree(self):
        cpp = ("#include <torch/extension.h>\nusing namespace torch;\n"
               "Tensor scale(const Tensor& x, double s = 2.0);\n"
               "Tensor scale(const Tensor& input, double factor) { return input * factor; }\n")
        state, _, text = self.plan(cpp, ["scale"])
        self.assertEqual(state, "split")
        self.assertIn('using namespace torch;\n__attribute__((visibility("hidden"))) '
                      'Tensor kforge_fn_0(const Tensor&, double);\n', text)
        other = cpp.replace("double factor", "int64_t factor")
        self.assertEqual(self.plan(other, ["scale"])[:2], ("refused", None))

    def test_what_the_bindings_unit_could_not_declare_is_refused(self):
        cases = {
            "static torch::Tensor relu_forward(torch::Tensor x) { return x; }":
                "relu_forward's return type names static",
            "namespace k {\ntorch::Tensor relu_forward(torch::Tensor x) { return x; }\n}":
                "relu_forward is not declared at namespace scope",
            "struct Opts { int k; };\ntorch::Tensor relu_forward(torch::Tensor x, Opts o) { return x; }":
                "relu_forward's parameter names Opts",
            "template <typename T> T relu_forward(T x) { return x; }":
                "relu_forward's parameter names T",
            "#include <torch/extension.h>\ntorch::Tensor relu_forward(torch::Tensor x) {\n"
            "  torch::nn::ReLU r; return r(x); }":
                "the code names torch::nn, which torch/types.h does not bring",
            "namespace py = pybind11;\ntorch::Tensor relu_forward(torch::Tensor x) { return x; }":
                "the code names pybind11, which torch/types.h does not bring",
            "#define OPEN {\ntorch::Tensor relu_forward(torch::Tensor x) OPEN return x; }":
                "a macro opens or closes a brace",
            "#define BEGIN \\\n  namespace k {\ntorch::Tensor relu_forward(torch::Tensor x) { return x; }":
                "a macro opens or closes a brace",
            "#define CLOSE }\ntorch::Tensor relu_forward(torch::Tensor x) { return x; }":
                "a macro opens or closes a brace",
            "auto relu_forward(torch::Tensor x) -> torch::Tensor { return x; }":
                "relu_forward is declared with more than a signature",
        }
        for cpp, why in cases.items():
            with self.subTest(cpp=cpp):
                self.assertEqual(self.plan(cpp), ("refused", None, why))

    def test_a_candidate_module_or_a_conditional_on_an_extension_macro_is_refused(self):
        own = "torch::Tensor f(torch::Tensor x) { return x; }\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}"
        self.assertEqual(bindings.plan("#include <torch/extension.h>\n" + own, None)[0], "refused")
        cpp = "#ifdef KF_EXTENSION_ONLY_MACRO\n#endif\n" + RELU
        self.assertEqual(self.plan(cpp, dropped_macros=["KF_EXTENSION_ONLY_MACRO"]),
                         ("refused", None, "a conditional tests KF_EXTENSION_ONLY_MACRO, which "
                                           "only torch/extension.h defines"))

    def test_a_main_cpp_not_laid_out_as_expected_is_refused(self):
        main = main_of(RELU, ["relu_forward"]).replace("m.def(", "m.def (")
        self.assertEqual(bindings.plan(main, ["relu_forward"])[0], "refused")

    def test_the_module_is_the_one_torchs_load_inline_writes(self):
        import torch.utils.cpp_extension as ce
        for functions, handling in ((["relu_forward"], True), ({"relu_forward": "doc"}, False),
                                    ("relu_forward", True)):
            captured = {}
            real = ce._jit_compile

            def capture(*args, **kw):
                captured.update(inspect.signature(real).bind(*args, **kw).arguments)
            ce._jit_compile = capture
            try:
                with tempfile.TemporaryDirectory() as d:
                    ce.load_inline("kf_probe", [RELU], functions=functions, build_directory=d,
                                   with_pytorch_error_handling=handling)
                    with open(captured["sources"][0]) as f:
                        written = f.read()
            finally:
                ce._jit_compile = real
            with self.subTest(functions=functions):
                self.assertTrue(written.endswith("\n" + "\n".join(
                    bindings.module_def(functions, handling))), written)
                self.assertEqual(bindings.plan(written, functions, handling)[0], "split")


TYPES_H = """#pragma once
#include <utility>
namespace torch { struct Tensor { float v; }; }
"""
# PYBIND11_MODULE's init (PyInit_<name>, as pybind11's) hands out the last function it binds
# and the name it bound it under, so a test can call it.
EXTENSION_H = """#pragma once
#include <torch/types.h>
namespace torch { template <class F> F wrap_pybind_function(F f) { return f; } }
struct kf_module { void* last = nullptr; const char* name = nullptr;
  template <class F> void def(const char* n, F f, const char*) { last = (void*)f; name = n; } };
#define KF_CAT2(a, b) a##b
#define KF_CAT(a, b) KF_CAT2(a, b)
#define PYBIND11_MODULE(name, m) static void kf_body(kf_module&); \\
  extern "C" void* KF_CAT(PyInit_, name)() { static kf_module mod; kf_body(mod); return &mod; } \\
  static void kf_body(kf_module& m)
"""


class FakeTorch:
    """torch.utils.cpp_extension for the worker's tests: load_inline writes main.cpp as torch's
    does and hands its sources to _jit_compile (looked up when called, as torch's module global
    is), which compiles each with g++ against the stand-in folder, writes build.ninja's flag
    lines and links with nothing undefined."""

    def __init__(self, include):
        self.include = include
        # The sources compiled, one name a line (builds run in forked children).
        self.log = os.path.join(os.path.dirname(include), "compiled.txt")

    @property
    def compiled(self):
        try:
            with open(self.log) as f:
                return f.read().split()
        except OSError:
            return []

    def include_paths(self, cuda=False):
        return [self.include]

    def load_inline(self, name, cpp_sources, functions=None, build_directory=None,
                    with_pytorch_error_handling=True, extra_cflags=None, extra_ldflags=None,
                    **kwargs):
        lines = ["#include <torch/extension.h>"] + list(cpp_sources)
        if functions is not None:
            lines += bindings.module_def(functions, with_pytorch_error_handling)
        path = os.path.join(build_directory, "main.cpp")
        with open(path, "w") as f:
            f.write("\n".join(lines))
        return self._jit_compile(name, [path], extra_cflags, None, extra_ldflags, None,
                                 build_directory, False, False, True, is_standalone=False,
                                 keep_intermediates=True)

    def _jit_compile(self, name, sources, extra_cflags, extra_cuda_cflags, extra_ldflags,
                     extra_include_paths, build_directory, verbose, with_cuda, is_python_module,
                     is_standalone, keep_intermediates=True):
        d = build_directory
        cflags = ["-DTORCH_EXTENSION_NAME=" + name, "-isystem", self.include, "-fPIC",
                  "-std=c++17"] + list(extra_cflags or [])
        with open(os.path.join(d, "build.ninja"), "w") as f:
            f.write("cflags = %s\npost_cflags = \n" % " ".join(cflags))
        objects = []
        for src in sources:
            obj = os.path.join(d, os.path.basename(src).rsplit(".", 1)[0] + ".o")
            with open(self.log, "a") as f:
                f.write(os.path.basename(src) + "\n")
            self._run(["g++"] + cflags + ["-c", src, "-o", obj], name)
            objects.append(obj)
        so = os.path.join(d, name + ".so")
        self._run(["g++", "-shared", "-Wl,--no-undefined"] + objects + list(extra_ldflags or []) +
                  ["-o", so], name)
        return types.SimpleNamespace(__file__=so, __name__=name)

    @staticmethod
    def _run(cmd, name):
        r = subprocess.run(cmd, capture_output=True, text=True)
        print(r.stdout + r.stderr)  # the build log, as torch's ninja output is
        if r.returncode != 0:
            raise RuntimeError("Error building extension '%s':\n%s" % (name, r.stderr))


SCALE = """#include <torch/extension.h>
torch::Tensor scale(torch::Tensor x) {
    return torch::Tensor{x.v * %s};
}
"""


class Value(ctypes.Structure):
    _fields_ = [("v", ctypes.c_float)]


class Module(ctypes.Structure):
    _fields_ = [("last", ctypes.c_void_p), ("name", ctypes.c_char_p)]


class WorkerTest(WorkerCase):
    HEADERS = {"torch/types.h": TYPES_H, "torch/extension.h": EXTENSION_H}

    def make_builder(self, include):
        self.fake = FakeTorch(include)
        return self.fake

    def build(self, cpp, cached=True, name="kf_ext", functions=("scale",)):
        d = self.artifact_dir()
        msg = {"op": "build", "dir": d, "pch_dir": "", "cached_bindings": cached,
               "bindings_dir": os.path.join(self.tmp.name, "bindings"),
               "light_dir": os.path.join(self.tmp.name, "light"),
               "spec": {"name": name, "cpp_sources": [cpp], "functions": list(functions)}}
        if os.path.exists(self.fake.log):
            os.unlink(self.fake.log)
        result = build_worker.build(self.chan, msg)
        with open(os.path.join(d, "main.cpp")) as f:
            main = f.read()
        return result, main, d

    def call(self, result, d, x, bound="scale"):
        """The extension's function called on x, through its module init as Python would find
        it (PyInit_<its name>); checks the name it is bound under."""
        lib = ctypes.CDLL(os.path.join(d, result["so_file"]))
        init = getattr(lib, "PyInit_" + result["module_name"])
        init.restype = ctypes.POINTER(Module)
        mod = init().contents
        self.assertEqual(mod.name.decode(), bound)
        return ctypes.CFUNCTYPE(Value, Value)(mod.last)(Value(x)).v

    def test_the_second_candidate_links_the_first_ones_bindings(self):
        r1, main1, d1 = self.build(SCALE % "2")
        self.assertTrue(r1["ok"], r1)
        self.assertEqual(r1["bindings"], "built")
        self.assertEqual(self.fake.compiled, ["main.cpp", "kforge_bindings.cpp"])
        self.assertTrue(main1.startswith("#include <torch/types.h>\n#include <torch/types.h>\n"))
        self.assertEqual(self.call(r1, d1, 3.0), 6.0)
        r2, _, d2 = self.build(SCALE % "5")
        self.assertTrue(r2["ok"], r2)
        self.assertEqual((r2["bindings"], r2["bindings_key"]), ("cached", r1["bindings_key"]))
        self.assertEqual(self.fake.compiled, ["main.cpp"])  # the bindings were not compiled
        self.assertEqual(self.call(r2, d2, 3.0), 15.0)  # its own code, through the kept bindings
        # Another extension's name, and other function names with the same signature: the same
        # kept object, its module init renamed for this extension, each function bound under
        # its own name.
        r3, _, d3 = self.build(SCALE % "7", name="kf_other")
        self.assertEqual((r3["bindings"], r3["bindings_key"]), ("cached", r1["bindings_key"]))
        self.assertEqual(self.fake.compiled, ["main.cpp"])
        self.assertEqual(self.call(r3, d3, 3.0), 21.0)
        r4, _, d4 = self.build((SCALE % "11").replace("scale(", "times("), name="kf_third",
                               functions=["times"])
        self.assertEqual((r4["bindings"], r4["bindings_key"]), ("cached", r1["bindings_key"]))
        self.assertEqual(self.call(r4, d4, 3.0, bound="times"), 33.0)

    def test_a_split_that_does_not_build_is_built_as_load_inline_would(self):
        # The stand-in torch/types.h lacks what the code needs; torch/extension.h has it.
        cpp = SCALE.replace("#include <torch/extension.h>\n",
                            "#include <torch/extension.h>\nauto* kf_needs = &torch::wrap_pybind_function<int(*)(int)>;\n")
        r, main, d = self.build(cpp % "2")
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["bindings"], "fell_back")
        self.assertIn("wrap_pybind_function", r["bindings_why"])
        self.assertTrue(main.startswith("#include <torch/extension.h>\n"))  # as load_inline wrote
        self.assertIn("PYBIND11_MODULE", main)
        with open(os.path.join(d, "bindings-attempt.log")) as f:
            self.assertIn("wrap_pybind_function", f.read())
        self.assertGreaterEqual(r["cpu_s"], r["bindings_cpu_s"])  # both attempts count
        self.assertEqual(self.call(r, d, 3.0), 6.0)

    def test_kept_bindings_compiled_with_other_flags_are_not_used(self):
        r1, _, _ = self.build(SCALE % "2")
        meta = os.path.join(self.tmp.name, "bindings", r1["bindings_key"], "meta.json")
        with open(meta, "w") as f:
            json.dump({"flags": ["cflags = -O0"]}, f)
        r2, _, d2 = self.build(SCALE % "3")
        self.assertTrue(r2["ok"], r2)
        self.assertEqual(r2["bindings"], "fell_back")
        self.assertIn("other flags", r2["bindings_why"])
        self.assertFalse(os.path.exists(meta))  # dropped: the next build compiles them again
        self.assertEqual(self.call(r2, d2, 3.0), 9.0)
        r3, _, _ = self.build(SCALE % "4")
        self.assertEqual(r3["bindings"], "built")

    def test_a_refused_plan_is_load_inlines_build_and_says_why(self):
        r, main, _ = self.build(SCALE.replace("torch::Tensor scale", "static torch::Tensor scale") % "2")
        self.assertTrue(r["ok"], r)
        self.assertEqual((r["bindings"], r["bindings_why"]),
                         ("refused", "scale's return type names static"))
        self.assertTrue(main.startswith("#include <torch/extension.h>\n"))
        self.assertEqual(self.fake.compiled, ["main.cpp"])

    def test_off_builds_as_load_inline_writes(self):
        r, main, d = self.build(SCALE % "2", cached=False)
        self.assertTrue(r["ok"], r)
        self.assertNotIn("bindings", r)
        self.assertIn("PYBIND11_MODULE", main)
        self.assertEqual(self.call(r, d, 1.5), 3.0)


if __name__ == "__main__":
    unittest.main()
