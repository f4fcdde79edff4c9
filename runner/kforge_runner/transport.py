"""Tensors that cross between the judge and a candidate process.

The judge owns every shared buffer. On the CPU a buffer is a file in a folder under /dev/shm
mapped by both processes; on a GPU it is device memory shared with CUDA IPC (torch's own
reduce/rebuild functions, with their arguments carried as JSON). The candidate only ever sees
inputs and the buffers it must write its outputs into: expected outputs never leave the judge.
"""
import base64
import math
import os

import torch

DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
    "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool,
}


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def numel(shape):
    return int(math.prod(shape)) if shape else 1


def poison(t):
    """Fill with a value no correct answer has: NaN, or the integer maximum."""
    if t.dtype.is_floating_point:
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).max)


class Exporter:
    """Judge side: allocates shared buffers and describes them. On a GPU they come from kforge's
    compiled helper (`native`, set once it is loaded), outside PyTorch's caching allocator: see
    SharedAlloc in runner/native/kforge_native.cpp for why. `shared_bytes` counts them."""

    def __init__(self, device, shm_dir):
        self.device = torch.device(device)
        self.shm_dir = shm_dir
        self.count = 0
        self.native = None
        self.shared_bytes = 0

    def new(self, shape, dtype, counted=True):
        """A buffer and its descriptor. `counted`: its device bytes are the judge's own
        (`shared_bytes`); a buffer lent to a confined judge is counted there instead."""
        shape = list(shape)
        self.count += 1
        if self.device.type == "cpu":
            path = os.path.join(self.shm_dir, "buf%d" % self.count)
            n = numel(shape)
            flat = torch.from_file(path, shared=True, size=max(n, 1), dtype=dtype)
            t = flat[:n].view(shape)
            desc = {"kind": "file", "path": path, "numel": n}
        elif self.native is not None and hasattr(self.native, "shared_alloc"):
            nbytes = numel(shape) * element_size(dtype)
            raw, handle = self.native.shared_alloc(nbytes, self.device.index or 0)
            t = raw.view(dtype).view(shape)
            if counted:
                self.shared_bytes += nbytes
            desc = {"kind": "cuda_raw", "handle": base64.b64encode(handle).decode(),
                    "nbytes": nbytes}
        else:  # before the helper is loaded: PyTorch's own sharing
            t = torch.empty(shape, dtype=dtype, device=self.device)
            desc = {"kind": "cuda_ipc", "args": _encode_ipc(t)}
        desc.update({"shape": shape, "dtype": dtype_name(dtype)})
        return t, desc

    def release(self, desc, counted=True):
        """After the judge drops the buffer's tensor: a file is unlinked (the device memory of a
        cuda_raw buffer is freed with its tensor)."""
        if desc.get("kind") == "file":
            try:
                os.unlink(desc["path"])
            except OSError:
                pass
        elif desc.get("kind") == "cuda_raw" and counted:
            self.shared_bytes -= desc["nbytes"]


class Borrower:
    """The confined judge's exporter: it allocates no shared buffer itself but borrows each from
    the trusted judge (through kforge: `ask` sends an event and returns its answer), and maps
    it as a candidate would. A CUDA IPC handle a process in a pid namespace of its own exports
    does not open in a sibling namespace (a candidate host's), one from the host's namespace
    opens in any (docs/SECURITY.md); on the CPU the trusted judge's files outlive a confined
    judge that is killed, and it removes them. `shared_bytes` counts the borrowed device
    memory: this judge plans with it as its own."""

    def __init__(self, device, ask):
        self.device = torch.device(device)
        self.ask = ask
        self.native = None
        self.shared_bytes = 0

    def new(self, shape, dtype):
        shape = list(shape)
        reply = self.ask("borrow", {"shape": shape, "dtype": dtype_name(dtype)})
        desc = dict(reply["buffer"])
        if desc.get("shape") != shape or desc.get("dtype") != dtype_name(dtype):
            raise RuntimeError("kforge lent a %s %s buffer for a %s %s one" % (
                desc.get("dtype"), desc.get("shape"), dtype_name(dtype), shape))
        t = open_buffer(desc, self.native)
        if desc["kind"] == "cuda_raw":
            self.shared_bytes += desc["nbytes"]
        desc["lent"] = int(reply["id"])
        return t, desc

    def release(self, desc):
        if desc.get("kind") == "cuda_raw":
            self.shared_bytes -= desc["nbytes"]
        self.ask("give_back", {"ids": [desc["lent"]]})


def element_size(dtype):
    return torch.empty((), dtype=dtype).element_size()


def open_buffer(desc, native=None):
    """Candidate side: the tensor a descriptor names (device memory or a mapped file)."""
    dtype = DTYPES[desc["dtype"]]
    if desc["kind"] == "file":
        n = desc["numel"]
        flat = torch.from_file(desc["path"], shared=True, size=max(n, 1), dtype=dtype)
        return flat[:n].view(desc["shape"])
    if desc["kind"] == "cuda_raw":
        device = torch.cuda.current_device()
        raw = native.shared_open(base64.b64decode(desc["handle"]), desc["nbytes"], device)
        return raw.view(dtype).view(desc["shape"])
    if desc["kind"] == "cuda_ipc":
        from torch.multiprocessing.reductions import rebuild_cuda_tensor
        return rebuild_cuda_tensor(*_decode_ipc(desc["args"]))
    raise ValueError("unknown buffer kind %r" % desc["kind"])


_TYPES = {
    "torch.Tensor": torch.Tensor,
    "torch.storage.TypedStorage": getattr(torch.storage, "TypedStorage", None),
    "torch.storage.UntypedStorage": getattr(torch.storage, "UntypedStorage", None),
    "torch.nn.parameter.Parameter": torch.nn.Parameter,
}


def _encode(v):
    if isinstance(v, bytes):
        return {"b64": base64.b64encode(v).decode()}
    if isinstance(v, torch.dtype):
        return {"dtype": dtype_name(v)}
    if isinstance(v, torch.device):
        return {"device": str(v)}
    if isinstance(v, type):
        name = v.__module__ + "." + v.__qualname__
        if name not in _TYPES:
            # torch names some storage classes differently across versions; keep what it says.
            _TYPES[name] = v
        return {"type": name}
    if isinstance(v, (tuple, list, torch.Size)):
        return {"tuple": [_encode(x) for x in v]}
    return v


def _decode(v):
    if isinstance(v, dict):
        if "b64" in v:
            return base64.b64decode(v["b64"])
        if "dtype" in v:
            return DTYPES[v["dtype"]]
        if "device" in v:
            return torch.device(v["device"])
        if "type" in v:
            t = _TYPES.get(v["type"])
            if t is None:
                t = _resolve_type(v["type"])
            return t
        if "tuple" in v:
            return tuple(_decode(x) for x in v["tuple"])
    return v


def _resolve_type(name):
    module, _, attr = name.rpartition(".")
    if not module.startswith("torch"):
        raise ValueError("refusing to resolve type %r" % name)
    import importlib
    obj = importlib.import_module(module)
    return getattr(obj, attr)


def _encode_ipc(t):
    from torch.multiprocessing.reductions import reduce_tensor
    _fn, args = reduce_tensor(t)
    return [_encode(a) for a in args]


def _decode_ipc(args):
    out = [_decode(a) for a in args]
    # tensor_size must be a torch.Size for some torch versions
    out[1] = torch.Size(out[1])
    return out
