"""Hooks on Triton, installed by the candidate host before a Triton candidate's code runs.

They observe, and in the ghost replay suppress; the supervisor decides what the counts mean
(src/execute/jit_rules.cc, runtime_rules.cc):
  - launch: every launch of a @triton.jit kernel (JITFunction.run, and a compiled kernel
    launched by hand with compiled[grid](...)) is counted; in ghost mode it returns at once,
    so nothing the candidate's kernels would have written gets written.
  - compile: the time spent in Triton's compiler (the verdict's build stage) and the kernel
    whose compile failed, with Triton's message (a compile_error at the candidate's line).
  - autotune: the autotuner's benchmarking runs inside a profiler scope that the ATen rules
    leave out (guard.EXCLUDED_SCOPE): it times configurations with PyTorch ops of its own
    (quantiles of the timings, a cache flush), which are not the candidate computing. The
    chosen configuration's real launch, and the candidate's pre/post hooks there, stay seen.
Each entry point is found by name; one that is missing is left out of "hooks", and a Triton
without the launch entry point cannot be judged (infra_error, decided by the supervisor).
"""
import importlib
import time

import torch

from . import guard


class State:
    """What the hooks saw in this process; `ghost` is set by the host around the ghost replay."""

    def __init__(self):
        self.ghost = False
        self.launches = 0
        self.suppressed = 0
        self.compiles = 0
        self.compile_ms = 0.0
        self.compile_error = None  # (kernel name, message) of the compile that last failed
        self.version = "unknown version"
        self.hooks = []

    def report(self):
        """Cumulative facts for every reply (the supervisor keeps the largest values)."""
        return {"version": self.version, "hooks": list(self.hooks), "compiles": self.compiles,
                "compile_ms": round(self.compile_ms, 3), "launches": self.launches}


def _module(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _kernel_name(src):
    """The name of the function a compile call is for (Triton's ASTSource carries its fn)."""
    fn = getattr(src, "fn", None)
    return getattr(fn, "__name__", None) or getattr(src, "name", None) or ""


def _hook_launches(state, jit):
    cls = getattr(jit, "JITFunction", None) if jit is not None else None
    original = getattr(cls, "run", None) if cls is not None else None
    if original is None:
        return False

    def run(self, *args, **kwargs):
        if kwargs.get("warmup"):  # compiles without launching
            return original(self, *args, **kwargs)
        state.launches += 1
        if state.ghost:
            state.suppressed += 1
            return None
        return original(self, *args, **kwargs)

    run.__wrapped__ = original
    cls.run = run
    return True


def _hook_compiled_launches(state, compiler):
    cls = getattr(compiler, "CompiledKernel", None) if compiler is not None else None
    original = getattr(cls, "__getitem__", None) if cls is not None else None
    if original is None:
        return False

    def getitem(self, grid):
        runner = original(self, grid)

        def launch(*args, **kwargs):
            state.launches += 1
            if state.ghost:
                state.suppressed += 1
                return None
            return runner(*args, **kwargs)
        return launch

    cls.__getitem__ = getitem
    return True


def _hook_compile(state, modules):
    """Wraps every binding of Triton's compile function that a launch may go through."""
    hooked = False
    for mod in modules:
        original = getattr(mod, "compile", None) if mod is not None else None
        if original is None or not callable(original):
            continue
        if getattr(original, "__kforge_hook__", False):
            hooked = True
            continue

        def compile(src, *args, __original=original, **kwargs):
            t0 = time.perf_counter()
            try:
                return __original(src, *args, **kwargs)
            except BaseException as e:
                state.compile_error = (_kernel_name(src), "%s: %s" % (type(e).__name__, e))
                raise
            finally:
                state.compiles += 1
                state.compile_ms += (time.perf_counter() - t0) * 1000.0

        compile.__kforge_hook__ = True
        setattr(mod, "compile", compile)
        hooked = True
    return hooked


def _hook_autotune(autotuner):
    cls = getattr(autotuner, "Autotuner", None) if autotuner is not None else None
    original = getattr(cls, "_bench", None) if cls is not None else None
    if original is None:
        return False

    def bench(self, *args, **kwargs):
        with torch.autograd.profiler.record_function(guard.EXCLUDED_SCOPE):
            return original(self, *args, **kwargs)

    cls._bench = bench
    return True


def install(state):
    """Imports triton (ImportError propagates: the host reports this Python cannot judge a
    Triton candidate) and hooks it; fills state.version and state.hooks."""
    import triton
    state.version = "triton " + str(getattr(triton, "__version__", "unknown version"))
    jit = _module("triton.runtime.jit")
    compiler = _module("triton.compiler")
    compiler_impl = _module("triton.compiler.compiler")
    if _hook_launches(state, jit):
        state.hooks.append("launch")
    if _hook_compiled_launches(state, compiler_impl) or _hook_compiled_launches(state, compiler):
        state.hooks.append("compiled_launch")
    if _hook_compile(state, [compiler, compiler_impl, jit]):
        state.hooks.append("compile")
    if _hook_autotune(_module("triton.runtime.autotuner")):
        state.hooks.append("autotune")
