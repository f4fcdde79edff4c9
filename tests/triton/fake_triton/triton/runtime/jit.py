"""triton.jit of the CPU stand-in: a JITFunction launched with kernel[grid](...) goes through
KernelInterface.__getitem__ -> JITFunction.run, compiles once per specialization through
triton.compiler.compile (looked up at call time, as Triton does), then runs on the grid."""
import inspect
import textwrap

LAUNCH_OPTIONS = {"num_warps", "num_stages", "num_ctas", "enable_fp_fusion", "maxnreg", "debug"}


class KernelInterface:
    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)


def _is_constexpr(annotation):
    from .. import language
    return annotation is language.constexpr or "constexpr" in str(annotation)


def _specialization(value, constexpr):
    if constexpr:
        return ("constexpr", value)
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        return ("pointer", str(value.dtype))
    return (type(value).__name__,)


class JITFunction(KernelInterface):
    def __init__(self, fn, do_not_specialize=None, debug=None, noinline=None, **_):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.constexprs = [name for name, p in self.signature.parameters.items()
                           if _is_constexpr(p.annotation)]
        source = textwrap.dedent(inspect.getsource(fn))
        self.src = source[source.index("def "):]  # the decorators are not compiled
        self.kernel_cache = {}
        self._body = None  # fn as a calling kernel runs it (__call__)

    def run(self, *args, grid, warmup, **kwargs):
        for option in LAUNCH_OPTIONS & set(kwargs):
            kwargs.pop(option)
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        key = tuple(_specialization(values[n], n in self.constexprs) for n in self.arg_names)
        kernel = self.kernel_cache.get(key)
        if kernel is None:
            from .. import compiler  # the attribute kforge's hooks may have wrapped
            kernel = compiler.compile(
                compiler.ASTSource(self, {n: values[n] for n in self.constexprs}))
            self.kernel_cache[key] = kernel
        if warmup:
            return kernel
        if callable(grid):
            grid = grid(values)
        kernel.launch(grid, values)
        return kernel

    def __call__(self, *args, **kwargs):
        """A @triton.jit function called from inside another kernel: runs its body (its
        constexpr globals as plain values, as in the kernel that calls it)."""
        if self._body is None:
            from ..compiler.compiler import _with_constexpr_values
            self._body = _with_constexpr_values(self.fn)
        return self._body(*args, **kwargs)


def jit(fn=None, **options):
    if fn is None:
        return lambda f: JITFunction(f, **options)
    return JITFunction(fn, **options)
