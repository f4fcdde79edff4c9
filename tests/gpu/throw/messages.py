"""Which failing checks reach Python from host code that nvcc compiled? (2026-12-07, an H100,
PyTorch 2.11+cu130, nvcc 13: `TORCH_CHECK(cond, "unary: unknown op ", op)` in a .cu file killed
the process with SIGSEGV, `TORCH_CHECK(cond, "unary: unknown op")` raised; tests/gpu/throw/
variants.py.) The same small functions are built twice, once as CUDA sources (nvcc) and once as
C++ sources (g++), and each is called in a process of its own:

    python3 tests/gpu/throw/messages.py          every function, both builds
    python3 tests/gpu/throw/messages.py --one BUILD FUNCTION
"""
import argparse
import subprocess
import sys

BODY = r"""
#include <torch/extension.h>
#include <sstream>
#include <stdexcept>
#include <string>

int64_t check_plain(int64_t v) { TORCH_CHECK(v < 0, "plain message"); return v; }
int64_t check_int(int64_t v) { TORCH_CHECK(v < 0, "message with an int ", v); return v; }
int64_t check_string(int64_t v) { TORCH_CHECK(v < 0, std::string("message from a std::string")); return v; }
int64_t str_only(int64_t v) { return (int64_t)c10::str("no throw ", v).size(); }
int64_t ostream_only(int64_t v) { std::ostringstream o; o << "no throw " << v; return (int64_t)o.str().size(); }
int64_t throw_runtime(int64_t v) { throw std::runtime_error("std::runtime_error " + std::to_string(v)); }
int64_t throw_char(int64_t v) { throw std::runtime_error("std::runtime_error from a literal"); }
"""
FUNCTIONS = ["check_plain", "check_int", "check_string", "str_only", "ostream_only",
             "throw_runtime", "throw_char"]
DECLS = "\n".join("int64_t %s(int64_t v);" % f for f in FUNCTIONS)


def build(kind):
    from torch.utils.cpp_extension import load_inline
    if kind == "nvcc":
        return load_inline(name="kforge_msg_nvcc", cpp_sources=DECLS, cuda_sources=BODY,
                           functions=FUNCTIONS, verbose=False)
    return load_inline(name="kforge_msg_gxx", cpp_sources=BODY, functions=FUNCTIONS,
                       verbose=False)


def one(kind, fn):
    import torch  # noqa: F401
    mod = build(kind)
    try:
        return "returned %s" % getattr(mod, fn)(7)
    except RuntimeError as e:
        return "raised (%s)" % str(e).splitlines()[0][:60]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=2)
    a = ap.parse_args()
    if a.one:
        print(one(*a.one), flush=True)
        return
    # Build both first (in parallel), then call each function in its own process.
    builds = [subprocess.Popen([sys.executable, "-c", "import sys; sys.path.insert(0, %r); "
                                "import messages; messages.build(%r)" % (sys.path[0], k)])
              for k in ("nvcc", "g++")]
    for p in builds:
        p.wait(timeout=400)
    for kind in ("nvcc", "g++"):
        for fn in FUNCTIONS:
            p = subprocess.run([sys.executable, __file__, "--one", kind, fn],
                               capture_output=True, text=True, timeout=300)
            line = p.stdout.strip() if p.returncode == 0 else (
                "killed by signal %d" % -p.returncode if p.returncode < 0
                else "exit %d: %s" % (p.returncode, p.stderr.strip().splitlines()[-1:]))
            print("%-5s %-14s %s" % (kind, fn, line), flush=True)


if __name__ == "__main__":
    main()
