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


def _is_triton_module(value):
    return isinstance(value, types.ModuleType) and (
        value.__name__ == "triton" or value.__name__.startswith("triton."))


def _is_constexpr_global(name, value, module_globals):
    """tl.constexpr(42), or a global annotated `x: tl.constexpr = 42` (Triton 3.6 takes both)."""
    if value is None or isinstance(value, language.constexpr):
        return True
    annotation = module_globals.get("__annotations__", {}).get(name)
    return annotation is language.constexpr or "constexpr" in str(annotation or "")


def _readable_global(name, value, module_globals):
    """What Triton lets a kernel read from its module: modules (their attributes are looked up
    when used), @jit functions, triton.language's own objects and dtypes, constexpr globals."""
    return (isinstance(value, types.ModuleType) or _is_jit(value)
            or getattr(value, "__module__", "").startswith("triton.language")
            or any(value is d for d in language.DTYPES)
            or name in KERNEL_BUILTINS
            or _is_constexpr_global(name, value, module_globals))


class _Checker(ast.NodeVisitor):
    """The first construct Triton would refuse: raises CompilationError at it. A @jit function
    the kernel calls is checked too (Triton compiles it with the kernel)."""

    def __init__(self, jit_fn, checked=None):
        self.src = jit_fn.src
        self.globals = jit_fn.fn.__globals__
        self.checked = checked if checked is not None else {id(jit_fn)}
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

    def _resolve(self, node):
        """(value, through a Triton module) of a callee named by a global and attributes
        (`tl.load`, `torch.relu`, `helper`); None for anything else (a local's method)."""
        if isinstance(node, ast.Name):
            if node.id in self.locals or node.id not in self.globals:
                return None
            return self.globals[node.id], False
        if isinstance(node, ast.Attribute):
            owner = self._resolve(node.value)
            if owner is None:
                return None
            value, _ = owner
            if not hasattr(value, node.attr):
                if isinstance(value, types.ModuleType):
                    self.fail(node, "AttributeError(\"module '%s' has no attribute '%s'\")"
                              % (value.__name__, node.attr))
                return None
            return getattr(value, node.attr), _is_triton_module(value)
        return None

    def visit_Call(self, node):
        resolved = self._resolve(node.func)
        if resolved is not None:
            value, from_triton = resolved
            name = ast.unparse(node.func)
            if _is_jit(value):
                self._check_callee(node, value)
            elif not (from_triton or name in KERNEL_BUILTINS
                      or getattr(value, "__module__", "").startswith("triton")):
                # Triton calls anything else with its own tensors at compile time; torch,
                # numpy and plain Python functions refuse them.
                self.fail(node, "TypeError('%s is not a Triton function or a @triton.jit "
                                "function: it cannot be called in a kernel')" % name)
        self.generic_visit(node)

    def _check_callee(self, node, jit_fn):
        if id(jit_fn) in self.checked:
            return
        self.checked.add(id(jit_fn))
        try:
            _Checker(jit_fn, self.checked).check()
        except CompilationError as e:
            self.fail(node, "in %s, called here: %s" % (jit_fn.__name__, e.error_message))

    def visit_Name(self, node):
        if not isinstance(node.ctx, ast.Load) or node.id in self.locals:
            return
        if node.id in self.globals:
            value = self.globals[node.id]
            if not _readable_global(node.id, value, self.globals):
                self.fail(node, "NameError('Cannot access global variable %s from within "
                                "@jit\'ed function. Triton kernels can only access global "
                                "variables that are annotated as constexpr (`x: "
                                "triton.language.constexpr = 42` or `x = "
                                "triton.language.constexpr(42)`)')" % node.id)
            return
        if node.id in KERNEL_BUILTINS or (hasattr(builtins, node.id) and node.id[0].isupper()):
            return
        self.fail(node, "NameError('%s is not defined')" % node.id)


def _with_constexpr_values(fn):
    """`fn` over a snapshot of its module's globals in which tl.constexpr(...) values are plain
    values: what a kernel sees (Triton bakes them in when it compiles)."""
    scope = fn.__globals__
    if not any(isinstance(v, language.constexpr) for v in scope.values()):
        return fn
    scope = {k: v.value if isinstance(v, language.constexpr) else v for k, v in scope.items()}
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)


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
        self.body = _with_constexpr_values(jit_fn.fn)

    def launch(self, grid, values):
        args = [language.Pointer(_flat(v)) if hasattr(v, "data_ptr") and hasattr(v, "numpy")
                else v for v in (values[n] for n in self.jit_fn.arg_names)]
        grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
        for z, y, x in itertools.product(range(grid[2]), range(grid[1]), range(grid[0])):
            language._set_program((x, y, z), grid)
            self.body(*args)

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
