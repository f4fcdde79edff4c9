"""Tests for kforge_runner.pch (the precompiled torch/extension.h): run with
/usr/bin/python3 -m unittest discover -s tests/runner. Uses g++ and a small stand-in for torch's
include folder, so it needs no torch and takes seconds."""
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PCH_PY = os.path.join(HERE, "..", "..", "runner", "kforge_runner", "pch.py")
sys.path.insert(0, os.path.join(HERE, "..", "..", "runner"))

from kforge_runner import pch  # noqa: E402

HEADER = """#pragma once
#include <map>
#include <regex>
#include <string>
#include <vector>
inline int kf_answer() { return static_cast<int>(std::string("forty-two").size()) + 33; }
"""
MAIN = """#include <torch/extension.h>
#include <torch/extension.h>
int kf_call() { return kf_answer(); }
"""
# torch/types.h's stand-in, and a cached-bindings build's host unit, which starts with it.
TYPES = """#pragma once
#include <array>
#include <string>
#include <unordered_map>
inline int kf_types() { return static_cast<int>(std::string("types").size()); }
"""
HOST = """#include <torch/types.h>
int kf_host() { return kf_types(); }
"""


class PchTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.inc = os.path.join(t, "site", "torch", "include")
        os.makedirs(os.path.join(self.inc, "torch"))
        with open(os.path.join(self.inc, "torch", "extension.h"), "w") as f:
            f.write(HEADER)
        with open(os.path.join(self.inc, "torch", "types.h"), "w") as f:
            f.write(TYPES)
        self.root = os.path.join(t, "pch")
        self.env = dict(os.environ, KFORGE_PCH_DIR=self.root, KFORGE_REAL_CXX="g++")
        os.environ["KFORGE_PCH_DIR"] = self.root  # what the worker's configure() sets
        pch._makers = []
        pch._started = set()

    def tearDown(self):
        os.environ.pop("KFORGE_PCH_DIR", None)
        self.tmp.cleanup()

    def main_args(self, d, ext_name, extra=()):
        """torch's ninja command line for main.cpp in `d`, less the compiler."""
        with open(os.path.join(d, "main.cpp"), "w") as f:
            f.write(MAIN)
        return ["-MMD", "-MF", "main.o.d", "-DTORCH_EXTENSION_NAME=" + ext_name, "-isystem",
                self.inc, "-fPIC", "-std=c++17", *extra, "-c", os.path.join(d, "main.cpp"), "-o",
                "main.o", "-O2"]

    def compile(self, name, ext_name, extra=()):
        """Compiles main.cpp in its own build folder the way torch's ninja file does."""
        d = os.path.join(self.tmp.name, name)
        os.makedirs(d)
        cmd = [sys.executable, PCH_PY, "cxx"] + self.main_args(d, ext_name, extra)
        r = subprocess.run(cmd, cwd=d, env=self.env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(d, "main.o"), "rb") as f:
            obj = f.read()
        with open(os.path.join(d, pch.WANT_FILE)) as f:
            want = json.load(f)
        return d, obj, want

    def make(self, build_dir):
        """after_build asked to make a missing PCH; waits for it. Returns (state, started)."""
        pch._makers = []
        pch._started = set()
        state = pch.after_build(build_dir, True)
        for p in pch._makers:
            p.wait(timeout=120)
        return state, len(pch._makers)

    def test_command_lines(self):
        flags = pch._compile_of_main(
            ["-MMD", "-MF", "main.o.d", "-DTORCH_EXTENSION_NAME=relu_v3", "-isystem", "/t/include",
             "-fPIC", "-std=c++17", "-c", "/b/x/main.cpp", "-o", "main.o", "-O3"])
        self.assertEqual(flags, ["-isystem", "/t/include", "-fPIC", "-std=c++17", "-O3"])
        # linking, version queries and other sources go to the compiler untouched
        self.assertIsNone(pch._compile_of_main(["main.o", "-shared", "-o", "x.so"]))
        self.assertIsNone(pch._compile_of_main(["-dumpfullversion", "-dumpversion"]))
        self.assertIsNone(pch._compile_of_main(["-c", "/b/kforge_native.cpp", "-o", "k.o"]))
        self.assertIsNone(pch._compile_of_main(["-include", "x.h", "-c", "main.cpp", "-o", "m.o"]))

    def test_made_once_then_used_with_identical_objects(self):
        d1, obj1, want1 = self.compile("b1", "first_ext")
        self.assertFalse(want1["used"])
        self.assertEqual(self.make(d1), ("missing", 1))
        gch = os.path.join(self.root, want1["key"], "torch", "extension.h.gch")
        self.assertTrue(os.path.isfile(gch), os.listdir(self.root))
        with open(os.path.join(self.root, want1["key"], "pch.json")) as f:
            info = json.load(f)
        self.assertEqual(info["exit"], 0)
        self.assertFalse(os.path.exists(os.path.join(d1, pch.WANT_FILE)))  # consumed

        # Another extension (another TORCH_EXTENSION_NAME, another folder) with the same flags
        # compiles against it, and the object file is the same bytes.
        d2, obj2, want2 = self.compile("b2", "second_ext")
        self.assertTrue(want2["used"])
        self.assertEqual(want2["key"], want1["key"])
        self.assertEqual(obj1, obj2)
        self.assertEqual(pch.after_build(d2, True), "used")

        # GCC really read the .gch: -H marks a used precompiled header with "!".
        r = subprocess.run(["g++", "-H", "-I" + os.path.dirname(os.path.dirname(gch)),
                            "-isystem", self.inc, "-fPIC", "-std=c++17", "-O2", "-fsyntax-only",
                            os.path.join(d2, "main.cpp")], capture_output=True, text=True)
        self.assertIn("! " + gch, r.stderr)

        # Other flags are another key: not used, and no second PCH is made without being asked.
        d3, _, want3 = self.compile("b3", "third_ext", extra=["-DNDEBUG"])
        self.assertFalse(want3["used"])
        self.assertNotEqual(want3["key"], want1["key"])
        self.assertEqual(pch.after_build(d3, False), "missing")
        self.assertFalse(os.path.exists(os.path.join(self.root, want3["key"])))

    def test_a_cached_bindings_build_gets_a_pch_for_each_of_its_two_units(self):
        # bindings.py's split: main.cpp starts with torch/types.h, kforge_bindings.cpp with
        # torch/extension.h. Each leaves its own note, both PCHs are made, and the next build
        # with the same flags reads both, its objects the same bytes.
        def build(name):
            d = os.path.join(self.tmp.name, name)
            os.makedirs(d)
            for unit, text in (("main.cpp", HOST), ("kforge_bindings.cpp", MAIN)):
                with open(os.path.join(d, unit), "w") as f:
                    f.write(text)
                args = ["-MMD", "-MF", unit + ".d", "-DTORCH_EXTENSION_NAME=" + name,
                        "-isystem", self.inc, "-fPIC", "-std=c++17", "-c",
                        os.path.join(d, unit), "-o", unit + ".o", "-O2"]
                r = subprocess.run([sys.executable, PCH_PY, "cxx"] + args, cwd=d, env=self.env,
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
            objs = []
            for unit in ("main.cpp", "kforge_bindings.cpp"):
                with open(os.path.join(d, unit + ".o"), "rb") as f:
                    objs.append(f.read())
            notes = {}
            for header in ("torch/extension.h", "torch/types.h"):
                with open(os.path.join(d, pch.want_file(header))) as f:
                    notes[header] = json.load(f)
            return d, objs, notes

        d1, objs1, notes1 = build("b1")
        self.assertFalse(any(n["used"] for n in notes1.values()))
        self.assertNotEqual(notes1["torch/types.h"]["key"], notes1["torch/extension.h"]["key"])
        self.assertEqual(self.make(d1), ("missing", 2))
        for header, note in notes1.items():
            gch = os.path.join(self.root, note["key"], header + ".gch")
            self.assertTrue(os.path.isfile(gch), (header, os.listdir(self.root)))
        d2, objs2, notes2 = build("b2")
        self.assertTrue(all(n["used"] for n in notes2.values()), notes2)
        self.assertEqual(objs1, objs2)
        self.assertEqual(pch.after_build(d2, True), "used")
        # GCC really read the types.h one.
        gch = os.path.join(self.root, notes2["torch/types.h"]["key"], "torch", "types.h.gch")
        r = subprocess.run(["g++", "-H", "-I" + os.path.dirname(os.path.dirname(gch)),
                            "-isystem", self.inc, "-fPIC", "-std=c++17", "-O2", "-fsyntax-only",
                            os.path.join(d2, "main.cpp")], capture_output=True, text=True)
        self.assertIn("! " + gch, r.stderr)

    def test_the_maker_started_by_a_configured_worker_makes_the_pch(self):
        # As in the build worker: configure() points $CXX at the wrapper, torch's ninja file
        # runs the wrapper, and the maker the worker starts inherits that environment. The maker
        # must still recognise the real compiler (before, it compared the note's compiler with
        # the wrapper, refused every note, and no build anywhere ever got a PCH).
        saved = {k: os.environ.get(k) for k in ("CXX", "KFORGE_REAL_CXX", "KFORGE_PCH_WAIT_S")}
        saved_original = pch._original_cxx
        try:
            os.environ["CXX"] = "g++"
            pch._original_cxx = None
            pch.configure(self.root, True)
            wrapper = os.environ["CXX"]
            self.assertNotEqual(os.path.realpath(wrapper), os.path.realpath(shutil.which("g++")))
            d = os.path.join(self.tmp.name, "b1")
            os.makedirs(d)
            r = subprocess.run([wrapper] + self.main_args(d, "first_ext"), cwd=d,
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, pch.WANT_FILE)) as f:
                key = json.load(f)["key"]
            pch._original_cxx = None  # the maker is a fresh process: only its environment
            self.assertEqual(self.make(d), ("missing", 1))
            self.assertTrue(os.path.isfile(os.path.join(self.root, key, "torch",
                                                        "extension.h.gch")),
                            os.listdir(self.root))
        finally:
            pch._original_cxx = saved_original
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_a_note_from_the_sandbox_cannot_run_anything_outside_it(self):
        # The note is written inside the candidate's sandbox and the PCH is made outside it:
        # a note asking for another program, a flag that runs one, or a path as its key makes
        # no PCH and runs nothing.
        d, _, want = self.compile("b1", "first_ext")
        self.assertIsNotNone(pch.trusted_want(want))
        mark = os.path.join(self.tmp.name, "ran")
        bad = [dict(want, flags=want["flags"] + ["-wrapper", "/bin/sh,-c,touch " + mark]),
               dict(want, flags=want["flags"] + ["-B" + self.tmp.name]),
               dict(want, flags=want["flags"] + ["-fplugin=/tmp/x.so"]),
               dict(want, compiler="/bin/sh", flags=["-c", "touch " + mark]),
               dict(want, key="../../escaped"),
               dict(want, header="/etc/passwd")]
        for w in bad:
            self.assertIsNone(pch.trusted_want(w), w)
            with open(os.path.join(d, pch.WANT_FILE), "w") as f:
                json.dump(w, f)
            self.assertEqual(self.make(d)[1], 0, w)  # no maker started
            self.assertEqual(pch.make(self.root, w), 1)
        self.assertFalse(os.path.exists(mark))
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "escaped")))

    def test_started_while_the_build_still_runs_and_only_once(self):
        d1, _, want1 = self.compile("b1", "e1")  # its compile is done, its link may still run
        pch.during_build(d1, False)
        self.assertEqual(pch._makers, [])  # a process that builds one candidate makes none
        pch.during_build(d1, True)
        pch.during_build(d1, True)
        self.assertEqual(len(pch._makers), 1)
        self.assertEqual(pch.after_build(d1, True), "missing")
        self.assertEqual(len(pch._makers), 1)  # not started twice
        pch._makers[0].wait(timeout=120)
        self.assertTrue(os.path.isfile(os.path.join(self.root, want1["key"], "torch",
                                                    "extension.h.gch")))

    def test_a_pch_being_made_outlives_the_worker_that_started_it(self):
        # `kforge eval` ends seconds after its build; the PCH takes longer. Killed with the
        # worker, it would never be made by short-lived processes: it runs on in its own session.
        d1, _, want1 = self.compile("b1", "e1")
        pch.during_build(d1, True)
        self.assertEqual(len(pch._makers), 1)
        maker = pch._makers[0]
        self.assertNotEqual(os.getsid(maker.pid), os.getsid(0))
        pch.stop()
        self.assertEqual(pch._makers, [])
        self.assertEqual(maker.wait(timeout=120), 0)
        self.assertTrue(os.path.isfile(os.path.join(self.root, want1["key"], "torch",
                                                    "extension.h.gch")))

    def test_main_cpp_beside_a_cuda_cu_waits_for_the_pch_being_made(self):
        _, obj0, _ = self.compile("b0", "e0")  # the object file without any PCH
        self.env["KFORGE_PCH_WAIT_S"] = "60"  # what configure() sets where the worker makes PCHs
        d = os.path.join(self.tmp.name, "b1")
        os.makedirs(d)
        with open(os.path.join(d, "cuda.cu"), "w") as f:
            f.write("// the build's CUDA half\n")
        # The compile starts, asks for the PCH and waits; the worker's tick reads the note and
        # starts making it; then the compile goes on with it.
        proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.path.insert(0, %r); "
                                 "from kforge_runner import pch; pch.cxx(sys.argv[1:])"
                                 % os.path.join(HERE, "..", "..", "runner")] + self.main_args(d, "e1"),
                                cwd=d, env=self.env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while not os.path.exists(os.path.join(d, pch.WANT_FILE)):
            self.assertLess(time.monotonic(), deadline, "no note from the compile")
            time.sleep(0.05)
        self.assertIsNone(proc.poll())  # still waiting: nothing has started the PCH yet
        pch.during_build(d, True)
        self.assertEqual(len(pch._makers), 1)
        _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        pch._makers[0].wait(timeout=60)
        with open(os.path.join(d, "main.o"), "rb") as f:
            self.assertEqual(f.read(), obj0)
        self.assertEqual(pch.after_build(d, True), "used")

    def test_no_wait_without_a_cuda_cu_or_where_no_pch_is_made(self):
        key = "k" * 32
        d = os.path.join(self.tmp.name, "b")
        os.makedirs(d)
        cwd = os.getcwd()
        os.chdir(d)  # the wrapper runs in the build folder
        try:
            os.environ["KFORGE_PCH_WAIT_S"] = "60"
            self.assertFalse(pch._worth_waiting(self.root, key))  # no cuda.cu: nothing to hide behind
            open("cuda.cu", "w").close()
            self.assertTrue(pch._worth_waiting(self.root, key))
            os.makedirs(os.path.join(self.root, key + ".failed"))
            self.assertFalse(pch._worth_waiting(self.root, key))  # it failed once: never again
            self.assertTrue(pch._worth_waiting(self.root, "j" * 32))
            os.environ["KFORGE_PCH_WAIT_S"] = ""  # a worker that makes no PCHs
            self.assertFalse(pch._worth_waiting(self.root, "j" * 32))
        finally:
            os.environ.pop("KFORGE_PCH_WAIT_S", None)
            os.chdir(cwd)
        # configure() sets the wait only where the worker makes missing PCHs.
        pch.configure(self.root, make_missing=True)
        self.assertEqual(os.environ.get("KFORGE_PCH_WAIT_S"), str(pch.WAIT_S))
        pch.configure(self.root, make_missing=False)
        self.assertIsNone(os.environ.get("KFORGE_PCH_WAIT_S"))
        pch.configure("")
        # And a compile that is not worth a wait asks for the PCH and goes on without it.
        self.env["KFORGE_PCH_WAIT_S"] = "60"
        _, _, want = self.compile("b2", "e1")
        self.assertFalse(want["used"])
        self.assertFalse(os.path.exists(os.path.join(self.root, want["key"])))

    def test_changed_headers_are_never_read_from_an_old_pch(self):
        d1, _, want1 = self.compile("b1", "e1")
        self.make(d1)
        time.sleep(0.01)
        with open(os.path.join(self.inc, "torch", "extension.h"), "a") as f:
            f.write("inline int kf_other() { return 7; }\n")
        _, _, want2 = self.compile("b2", "e2")
        self.assertNotEqual(want2["key"], want1["key"])
        self.assertFalse(want2["used"])

    def test_concurrent_makers_never_make_more_than_max_pchs(self):
        # Workers start makers for different flag sets at the same time. Before, each worker
        # counted only finished PCHs before starting its maker, and five were made with a limit
        # of 4 on the H200; the makers now take slots one at a time under one lock.
        _, _, want = self.compile("b1", "e1")
        n = pch.MAX_PCHS + 2
        wants = [dict(want, key="%032x" % (i + 1), flags=want["flags"] + ["-DKF_V%d" % i])
                 for i in range(n)]
        procs = [subprocess.Popen([sys.executable, PCH_PY, "make", self.root, json.dumps(w)],
                                  env=self.env) for w in wants]
        for p in procs:
            self.assertEqual(p.wait(timeout=300), 0)
        made = [w["key"] for w in wants if os.path.isdir(os.path.join(self.root, w["key"]))]
        self.assertEqual(len(made), pch.MAX_PCHS, os.listdir(self.root))

    def test_a_pch_being_made_holds_its_slot(self):
        _, _, want = self.compile("b1", "e1")
        os.makedirs(self.root, exist_ok=True)
        held = []
        for i in range(pch.MAX_PCHS):  # half finished, half being made (their lock held)
            k = "%032x" % (i + 1)
            if i % 2:
                f = open(os.path.join(self.root, k + ".lock"), "w")
                fcntl.flock(f, fcntl.LOCK_EX)
                held.append(f)
            else:
                os.makedirs(os.path.join(self.root, k))
        other = dict(want, key="%032x" % 99)
        try:
            self.assertEqual(pch.make(self.root, other), 0)
            self.assertFalse(os.path.exists(os.path.join(self.root, other["key"])))
        finally:
            for f in held:
                f.close()
        # A maker that died let go of its lock: its slot is free again.
        self.assertEqual(pch.make(self.root, other), 0)
        self.assertTrue(os.path.isdir(os.path.join(self.root, other["key"])), os.listdir(self.root))

    def test_a_failed_pch_is_remembered_and_the_build_still_works(self):
        with open(os.path.join(self.inc, "torch", "extension.h"), "w") as f:
            f.write(HEADER + "#ifndef TORCH_EXTENSION_NAME\n#error needs a name\n#endif\n")
        d1, _, want1 = self.compile("b1", "e1")  # the real compile defines the name: fine
        self.make(d1)
        self.assertTrue(os.path.isdir(os.path.join(self.root, want1["key"] + ".failed")))
        self.assertFalse(os.path.exists(os.path.join(self.root, want1["key"])))
        d2, _, want2 = self.compile("b2", "e2")
        self.assertFalse(want2["used"])
        self.assertEqual(self.make(d2), ("missing", 0))  # not tried again


if __name__ == "__main__":
    unittest.main()
