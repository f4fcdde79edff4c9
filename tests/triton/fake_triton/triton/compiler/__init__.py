"""triton.compiler of the CPU stand-in (see triton/__init__.py)."""
from .compiler import ASTSource, CompiledKernel, compile  # noqa: F401
from .errors import CompilationError  # noqa: F401
