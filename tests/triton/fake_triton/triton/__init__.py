"""A CPU stand-in for Triton, for kforge's tests only.

kforge's CI has no GPU and no Triton, yet must test the Triton path end to end: family
detection, the hooks the candidate host installs, the launch counts, the ghost replay, compile
errors mapped to candidate lines. This package keeps the parts of Triton's Python interface
that a KernelBench-style candidate and those hooks touch, under the same names:
triton.jit / JITFunction.run / KernelInterface.__getitem__ (kernel[grid](...)),
triton.compiler.compile and CompiledKernel, triton.runtime.autotuner.Autotuner._bench,
triton.autotune / heuristics / Config, triton.cdiv, and a slice of triton.language (tl).

A kernel "compiles" by a check of its body and of the @jit functions it calls (names it cannot
resolve, globals that are not constexprs, calls of anything but Triton's functions and @jit
functions: torch, numpy, plain Python; what Triton 3.6's compiler refuses too), raised as
CompilationError in Triton's "at LINE:COL:" form. tl.constexpr(...) globals run as their values. It runs as Python over the grid, one
program at a time, on numpy views of the CPU tensors it is given: numpy, so that a kernel's
work is as invisible to PyTorch's profiler as a GPU kernel's is.

It is reached only through tests/triton/python.sh (PYTHONPATH); it is never installed.
"""
__version__ = "0.0+kforge.cpu-stand-in"

from . import language  # noqa: F401
from . import compiler  # noqa: F401
from .runtime.autotuner import Config, autotune, heuristics  # noqa: F401
from .runtime.jit import JITFunction, KernelInterface, jit  # noqa: F401
from .compiler.errors import CompilationError  # noqa: F401


def cdiv(a, b):
    return (a + b - 1) // b


def next_power_of_2(n):
    p = 1
    while p < n:
        p *= 2
    return p
