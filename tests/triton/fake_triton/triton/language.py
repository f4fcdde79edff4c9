"""triton.language of the CPU stand-in: block values are numpy arrays (Block, with Triton's
`.to(dtype)`), pointers are a flat numpy view of a tensor's memory plus element offsets, and
the running program's id is module state set by the launcher (compiler.py)."""
import numpy as np


class constexpr:
    """The annotation of compile-time parameters (`BLOCK: tl.constexpr`)."""

    def __init__(self, value=None):
        self.value = value


float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int1 = np.dtype("bool")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
bfloat16 = "bfloat16"  # numpy has none: a kernel that computes in it fails to run here
DTYPES = (float16, float32, float64, int1, int8, int16, int32, int64, uint8, bfloat16)


class Block(np.ndarray):
    """A block of values: a numpy array that also converts like Triton's tensors."""

    def to(self, dtype, **_):
        return _block(np.asarray(self).astype(dtype))


def _block(x):
    return np.asarray(x).view(Block)


class _PointerType:
    def __init__(self, element_ty):
        self.element_ty = element_ty


class Pointer:
    """A tensor's memory (a flat numpy view from its first element) plus element offsets."""

    def __init__(self, base, offsets=0):
        self.base = base
        self.offsets = offsets

    @property
    def dtype(self):
        return _PointerType(self.base.dtype)

    def __add__(self, other):
        return Pointer(self.base, self.offsets + np.asarray(other))

    __radd__ = __add__

    def __sub__(self, other):
        return Pointer(self.base, self.offsets - np.asarray(other))


_program = {"pid": (0, 0, 0), "grid": (1, 1, 1)}


def program_id(axis):
    return _program["pid"][axis]


def num_programs(axis):
    return _program["grid"][axis]


def arange(start, end):
    return _block(np.arange(start, end, dtype=np.int64))


def _index(ptr, mask):
    offs = np.asarray(ptr.offsets, dtype=np.int64)
    if mask is None:
        mask = np.ones(offs.shape, dtype=bool)
    offs, mask = np.broadcast_arrays(offs, np.asarray(mask, dtype=bool))
    live = offs[mask]
    if live.size and (live.min() < 0 or live.max() >= ptr.base.size):
        # What an illegal address does on a GPU, as an error a test can see.
        raise IndexError("out-of-bounds access at element %d of %d"
                         % (int(live.max() if live.max() >= ptr.base.size else live.min()),
                            ptr.base.size))
    return offs, mask


def load(pointer, mask=None, other=None, **_):
    offs, mask = _index(pointer, mask)
    values = pointer.base[np.where(mask, offs, 0)] if pointer.base.size else \
        np.zeros(offs.shape, dtype=pointer.base.dtype)
    fill = np.asarray(0 if other is None else other).astype(pointer.base.dtype)
    return _block(np.where(mask, values, fill))


def store(pointer, value, mask=None, **_):
    offs, mask = _index(pointer, mask)
    value = np.broadcast_to(np.asarray(value), offs.shape)
    pointer.base[offs[mask]] = value[mask].astype(pointer.base.dtype)


def zeros(shape, dtype):
    return _block(np.zeros(shape, dtype=dtype))


def full(shape, value, dtype):
    return _block(np.full(shape, value, dtype=dtype))


def where(condition, x, y):
    return _block(np.where(condition, x, y))


def maximum(x, y):
    return _block(np.maximum(x, y))


def minimum(x, y):
    return _block(np.minimum(x, y))


def _unary(f):
    return lambda x, **_: _block(f(np.asarray(x)))


exp = _unary(np.exp)
log = _unary(np.log)
sqrt = _unary(np.sqrt)
abs = _unary(np.abs)  # noqa: A001 - Triton's name
cos = _unary(np.cos)
sin = _unary(np.sin)
sigmoid = _unary(lambda x: 1.0 / (1.0 + np.exp(-x)))
rsqrt = _unary(lambda x: 1.0 / np.sqrt(x))
erf = _unary(np.vectorize(__import__("math").erf, otypes=[np.float32]))


def _reduce(f):
    def reduce(x, axis=None, keep_dims=False, **_):
        return _block(f(np.asarray(x), axis=axis, keepdims=keep_dims))
    return reduce


sum = _reduce(np.sum)  # noqa: A001
max = _reduce(np.max)  # noqa: A001
min = _reduce(np.min)  # noqa: A001


def cumsum(x, axis=0, reverse=False, dtype=None, **_):
    x = np.asarray(x)
    if reverse:
        return _block(np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=dtype), axis))
    return _block(np.cumsum(x, axis=axis, dtype=dtype))


def dot(a, b, acc=None, input_precision=None, allow_tf32=None, out_dtype=float32, **_):
    out = np.asarray(a, dtype=np.float32) @ np.asarray(b, dtype=np.float32)
    return _block(out if acc is None else np.asarray(acc) + out)


def cdiv(a, b):
    return (a + b - 1) // b


def trans(x):
    return _block(np.asarray(x).T)


def reshape(x, shape, **_):
    return _block(np.reshape(np.asarray(x), shape))


def broadcast_to(x, shape):
    return _block(np.broadcast_to(np.asarray(x), shape))


def multiple_of(x, _):
    return x


max_contiguous = multiple_of
static_range = range


def static_assert(cond, msg=""):
    assert cond, msg


def device_assert(cond, msg=""):
    assert np.all(cond), msg


def _set_program(pid, grid):
    _program["pid"] = pid
    _program["grid"] = grid
