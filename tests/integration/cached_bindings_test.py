#!/usr/bin/env python3
"""--cached-bindings end to end with the real torch (CPU backend): three samples of the relu
example, each with its own extension name and function name and the same signature, evaluated
one after another with one build cache. The first compiles the bindings; the second and third
link the kept object (its module init renamed for their extension) and compile only their own
code; all three are `ok`, and each one's module is its own extension with its function under
its own name. A sample whose signature differs compiles bindings of its own.

Usage: cached_bindings_test.py --kforge build/kforge [--python /usr/bin/python3]
"""
import os
import shutil
import subprocess
import sys
import tempfile

import evalcli
from evalcli import check, finish

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The candidate checks, inside forward, that the module it calls is its own extension by name
# and that its function is bound under its own name: what load_inline's module would be.
CHECK = '''

_forward = ModelNew.forward


def _checked(self, x):
    assert relu_ext.__name__ == %(ext)r, relu_ext.__name__
    assert relu_ext.%(fn)s.__name__ == %(fn)r, relu_ext.%(fn)s.__name__
    return _forward(self, x)


ModelNew.forward = _checked
'''


def sample(tmp, i, ext, fn, extra_param=False):
    text = open(os.path.join(ROOT, "examples/cpu/relu.py")).read()
    text = text.replace("kforge_cpu_relu", ext).replace("relu_forward", fn)
    if extra_param:  # another signature: (Tensor, double)
        text = text.replace("torch::Tensor %s(torch::Tensor x)" % fn,
                            "torch::Tensor %s(torch::Tensor x, double unused)" % fn)
        text = text.replace("relu_ext.%s(x.contiguous())" % fn,
                            "relu_ext.%s(x.contiguous(), 1.0)" % fn)
    path = os.path.join(tmp, "sample_%d.py" % i)
    with open(path, "w") as f:
        f.write(text + CHECK % {"ext": ext, "fn": fn})
    return path


def main():
    a = evalcli.command_line()
    if shutil.which("objcopy") is None:
        print("cached_bindings_test: objcopy (binutils) is needed, as g++ is")
        return 1
    # A build cache of its own: ctest's shared one (KFORGE_BUILD_CACHE) may hold these
    # bindings already, and this test counts what is built and kept.
    os.environ.pop("KFORGE_BUILD_CACHE", None)
    tmp = tempfile.mkdtemp(prefix="kf-bindings-")
    cache = os.path.join(tmp, "cache")
    problem = os.path.join(ROOT, "problems/level1/relu.py")
    try:
        cases = [("kf_relu_a", "relu_a", False, "built"), ("kf_relu_b", "relu_b", False, "cached"),
                 ("kf_relu_c", "relu_c", False, "cached"), ("kf_relu_d", "relu_d", True, "built")]
        for i, (ext, fn, extra, want) in enumerate(cases):
            v = evalcli.evaluate(a.kforge, a.python, cache, problem,
                                 sample(tmp, i, ext, fn, extra), "--cached-bindings")
            check(v["status"] == "ok", "%s: %s; %s" % (ext, v["status"], v.get("feedback", "")[:800]))
            build = next((s for s in v["stages"] if s["name"] == "build"), {})
            got = {k: n for k, n in (build.get("bindings") or {}).items() if n}
            check(got == {want: 1}, "%s: bindings %s, want %s" % (ext, got, want))
        kept = os.path.join(cache, "bindings")
        entries = os.listdir(kept) if os.path.isdir(kept) else []
        check(len([e for e in entries if not e.endswith(".tmp")]) == 2,
              "two kept bindings' objects (one per signature): %s" % entries)
    except subprocess.TimeoutExpired as e:
        check(False, "timed out: %s" % e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return finish("cached_bindings_test")


if __name__ == "__main__":
    sys.exit(main())
