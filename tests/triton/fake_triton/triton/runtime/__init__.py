"""triton.runtime of the CPU stand-in (see triton/__init__.py)."""
from .autotuner import Autotuner, Config, autotune, heuristics  # noqa: F401
from .jit import JITFunction, KernelInterface, jit  # noqa: F401
