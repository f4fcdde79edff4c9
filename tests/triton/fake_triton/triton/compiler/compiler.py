"""triton.compiler of the CPU stand-in: `compile` checks a kernel's body the way Triton's
compiler refuses it, and a CompiledKernel runs the body as Python over the grid."""
import ast
import builtins
import itertools
import types

import numpy as np

from .. import language
from .errors import CompilationError

# The Python builtins a Triton kernel may use (the rest are not compiled).
KERNEL_BUILTINS = {"float", "getattr", "int", "isinstance", "len", "list", "max", "min",
                   "print", "range", "bool", "tuple"}


class ASTSource:
    def __init__(self, fn, constants):
        self.fn = fn  # the JITFunction
        self.name = fn.__name__
        self.constants = constants


def _is_jit(value):
    from ..runtime.jit import JITFunction
    return isinstance(value, JITFunction)


def _allowed_module(module):
    return module.__name__ == "triton" or module.__name__.startswith("triton.")


class _Checker(ast.NodeVisitor):
    """The first construct Triton would refuse: raises CompilationError at it."""

    def __init__(self, jit_fn):
        self.src = jit_fn.src
        self.globals = jit_fn.fn.__globals__
        tree = ast.parse(self.src)
        self.root = tree.body[0]
        self.locals = {a.arg for a in self.root.args.args + self.root.args.kwonlyargs}
        for node in ast.walk(self.root):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.locals.add(node.id)

    def fail(self, node, message):
        raise CompilationError(self.src, node, message)

    def check(self):
        for stmt in self.root.body:
            self.visit(stmt)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id not in self.locals:
            value = self.globals.get(node.func.id)
            plain = isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) and \
                not getattr(value, "__module__", "").startswith("triton")
            if plain and node.func.id not in KERNEL_BUILTINS:
                self.fail(node, "TypeError('%s is a Python function, not a @triton.jit "
                                "function: it cannot be called in a kernel')" % node.func.id)
        self.generic_visit(node)

    def visit_Name(self, node):
        if not isinstance(node.ctx, ast.Load) or node.id in self.locals:
            return
        if node.id in self.globals:
            value = self.globals[node.id]
            if isinstance(value, types.ModuleType) and not _allowed_module(value):
                self.fail(node, "unsupported: the module %s (%s) cannot be used in a Triton "
                                "kernel" % (node.id, value.__name__))
            return
        if node.id in KERNEL_BUILTINS or (hasattr(builtins, node.id) and node.id[0].isupper()):
            return
        self.fail(node, "NameError('%s is not defined')" % node.id)


def _flat(tensor):
    """A numpy view of a CPU tensor's memory, from its first element over all its elements."""
    arr = tensor.detach().numpy() if tensor.requires_grad else tensor.numpy()
    if tensor.numel() == 0:
        return np.zeros(0, dtype=arr.dtype)
    span = 1 + sum((s - 1) * st for s, st in zip(tensor.shape, tensor.stride()))
    return np.lib.stride_tricks.as_strided(arr, shape=(span,), strides=(arr.itemsize,))


class CompiledKernel:
    def __init__(self, jit_fn, constants):
        self.jit_fn = jit_fn
        self.constants = constants

    def launch(self, grid, values):
        args = [language.Pointer(_flat(v)) if hasattr(v, "data_ptr") and hasattr(v, "numpy")
                else v for v in (values[n] for n in self.jit_fn.arg_names)]
        grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
        for z, y, x in itertools.product(range(grid[2]), range(grid[1]), range(grid[0])):
            language._set_program((x, y, z), grid)
            self.jit_fn.fn(*args)

    def __getitem__(self, grid):
        """A compiled kernel launched by hand (compiled[grid](*args))."""
        def runner(*args, **kwargs):
            bound = self.jit_fn.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            self.launch(grid(dict(bound.arguments)) if callable(grid) else grid,
                        dict(bound.arguments))
        return runner


def compile(src, target=None, options=None, **_):  # noqa: A001 - Triton's name
    _Checker(src.fn).check()
    return CompiledKernel(src.fn, src.constants)
