"""Tests for kforge_runner.toolchain (the facts a failed build and `kforge doctor` report): run
with /usr/bin/python3 -m unittest discover -s tests/runner. A stand-in for torch's builder and
folders of our own, so it needs no torch."""
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

from kforge_runner import toolchain  # noqa: E402


class FakeBuilder:
    """torch.utils.cpp_extension's two search-path functions, pointed at our folders."""

    def __init__(self, include, lib):
        self.include, self.lib = include, lib

    def include_paths(self, cuda=False):
        return [self.include]

    def library_paths(self, cuda=False):
        return [self.lib]


class DeviceTypeBuilder:
    """torch >= 2.6's shape: include_paths(device_type="cpu"); CUDA's folder only for "cuda"
    (True, the old argument, asks for nothing more than the CPU folders)."""

    def __init__(self, include, cuda_include, lib):
        self.include, self.cuda_include, self.lib = include, cuda_include, lib

    def include_paths(self, device_type="cpu"):
        return [self.include] + ([self.cuda_include] if device_type == "cuda" else [])

    def library_paths(self, device_type="cpu"):
        return [self.lib]


class LocateTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.include = os.path.join(self.tmp.name, "include")
        self.lib = os.path.join(self.tmp.name, "lib")
        os.makedirs(os.path.join(self.include, "torch"))
        os.makedirs(self.lib)
        open(os.path.join(self.include, "torch", "extension.h"), "w").close()
        open(os.path.join(self.lib, "libtorch.so"), "w").close()
        self.ce = FakeBuilder(self.include, self.lib)

    def tearDown(self):
        self.tmp.cleanup()

    def test_found_in_the_builders_folders_or_none(self):
        probe = {"headers": ["torch/extension.h", "kforge_no_such_header.h"],
                 "libraries": ["torch", "kforge_no_such_library"]}
        found = toolchain.locate(probe, False, self.ce)
        self.assertEqual(found["headers"]["torch/extension.h"],
                         os.path.join(self.include, "torch", "extension.h"))
        self.assertIsNone(found["headers"]["kforge_no_such_header.h"])
        self.assertEqual(found["libraries"]["torch"], os.path.join(self.lib, "libtorch.so"))
        self.assertIsNone(found["libraries"]["kforge_no_such_library"])

    def test_cuda_headers_with_a_device_type_builder(self):
        # On the H200 machine's torch a CUDA candidate's real compile error was blamed on
        # "cuda_runtime.h is missing" because include_paths(True) had left CUDA's folder out.
        cuda_include = os.path.join(self.tmp.name, "cuda", "include")
        os.makedirs(cuda_include)
        open(os.path.join(cuda_include, "cuda_runtime.h"), "w").close()
        ce = DeviceTypeBuilder(self.include, cuda_include, self.lib)
        found = toolchain.locate({"headers": ["cuda_runtime.h"]}, True, ce)
        self.assertEqual(found["headers"]["cuda_runtime.h"],
                         os.path.join(cuda_include, "cuda_runtime.h"))
        cpu = toolchain.locate({"headers": ["cuda_runtime.h"]}, False, ce)
        self.assertNotEqual(cpu["headers"]["cuda_runtime.h"],
                            os.path.join(cuda_include, "cuda_runtime.h"))

    def test_the_compilers_own_folders_count(self):
        # Debian's pybind11 and (often) torch's headers are found in /usr/include, which is no
        # folder of torch's builder.
        found = toolchain.locate({"headers": ["stdio.h"]}, False, self.ce)
        self.assertTrue(found["headers"]["stdio.h"], found)

    def test_a_dangling_symlink_is_missing(self):
        # Debian's torch/include/torch points into /usr/include/torch, which libtorch-dev fills.
        # (A name of our own: this machine may have the real one in /usr/include.)
        os.symlink(os.path.join(self.tmp.name, "gone.h"),
                   os.path.join(self.include, "torch", "kforge_dangling.h"))
        found = toolchain.locate({"headers": ["torch/kforge_dangling.h"]}, False, self.ce)
        self.assertIsNone(found["headers"]["torch/kforge_dangling.h"])


class ToolsTest(unittest.TestCase):
    def setUp(self):
        # $CXX as the worker found it before any PCH wrapper (test_pch configures one).
        patch = mock.patch.object(toolchain.pch, "_original_cxx", None)
        patch.start()
        self.addCleanup(patch.stop)

    def test_a_working_compiler(self):
        with mock.patch.dict(os.environ, {"CXX": "g++"}):
            facts = toolchain.tools(False)
        self.assertEqual(facts["cxx"], "g++")
        self.assertTrue(facts["cxx_path"])
        self.assertIs(facts["cxx_works"], True)
        self.assertNotIn("nvcc", facts)  # only CUDA builds need it

    def test_a_missing_or_broken_compiler(self):
        with mock.patch.dict(os.environ, {"CXX": "kforge-no-such-compiler"}):
            facts = toolchain.tools(False)
        self.assertIsNone(facts["cxx_path"])
        self.assertIs(facts["cxx_works"], False)
        with mock.patch.dict(os.environ, {"CXX": "false"}):  # runs, compiles nothing
            facts = toolchain.tools(False)
        self.assertTrue(facts["cxx_path"])
        self.assertIs(facts["cxx_works"], False)

    def test_nvcc_where_torch_looks(self):
        with tempfile.TemporaryDirectory() as home:
            with mock.patch.dict(os.environ, {"CUDA_HOME": home}):
                self.assertIsNone(toolchain.tools(True)["nvcc"])
                os.makedirs(os.path.join(home, "bin"))
                open(os.path.join(home, "bin", "nvcc"), "w").close()
                self.assertEqual(toolchain.tools(True)["nvcc"], os.path.join(home, "bin", "nvcc"))


if __name__ == "__main__":
    unittest.main()
