"""The judge's memory and the shared buffers a trial runs on (docs/PROTOCOL.md, "Memory").

`Memory` is what the judge plans with: the device's free memory, or a budget that caps it. A
`Slot` is one set of shared buffers: the candidate's inputs and the outputs it must write, with
the pristine inputs and reference outputs kept beside them when they are small enough.
"""
import os

import torch

from . import transport
from .common import device_sync

# The memory model (docs/PROTOCOL.md, "Memory"). Between calls a slot holds only what the
# candidate needs: its input buffers and the buffers its outputs go to. A slot whose pristine
# inputs and reference outputs together take at most this share of the memory the judge plans
# with keeps them too (one reference run per trial); a larger one draws its inputs again from
# their seed and runs the reference when it checks (two reference runs, a fraction of the memory).
KEEP_SHARE = 1 / 64
# Cached blocks above this are handed back to the driver before a candidate runs: it is another
# process, and cannot use what this one's allocator keeps.
CACHE_SLACK_BYTES = 1 << 30


def tensor_bytes(values):
    return sum(x.numel() * x.element_size() for x in values if isinstance(x, torch.Tensor))


class Memory:
    """What the judge plans with: the device's free memory (or a budget that caps it, for tests
    and shared GPUs: $KFORGE_DEVICE_MEMORY_BUDGET bytes), and the peak it held.

    The peak is measured per request (`begin`, `end`): on a GPU PyTorch's peak plus the shared
    buffers; on the CPU the resident set's high-water mark above what the judge held when it
    started (torch, Python, the helper's flush buffer). With a budget the CPU stands in for a
    device: a request whose peak passed the budget fails as an out-of-memory would, and large
    allocations are mapped on their own so that what is freed leaves the resident set, as freed
    device memory leaves the GPU (`_exact_resident_set`)."""

    def __init__(self, device, exporter):
        self.device = torch.device(device)
        self.exporter = exporter  # its shared buffers are outside PyTorch's allocator
        self.budget = int(os.environ.get("KFORGE_DEVICE_MEMORY_BUDGET", "0") or 0)
        self.held = 0  # CPU: bytes of the slots' tensors (no allocator to ask)
        self.peak = 0
        self.base = 0  # CPU: the resident set not counted (what the judge started with)
        self.resettable = False  # CPU: the high-water mark can be reset per request
        if not self.cuda():
            if self.budget:
                _exact_resident_set()
            self.base = _status_bytes("VmRSS")
            self.resettable = _reset_high_water()

    def cuda(self):
        return self.device.type == "cuda"

    def allocated(self):
        """Device memory the judge holds: PyTorch's tensors and the shared buffers."""
        return torch.cuda.memory_allocated(self.device) + self.exporter.shared_bytes

    def rebase(self):
        """On the CPU: what is resident now is the judge's start-up memory, not its trials'."""
        if not self.cuda():
            self.base = _status_bytes("VmRSS")

    def begin(self):
        """Before a request: the high-water mark starts again from what is held now."""
        if self.cuda():
            torch.cuda.reset_peak_memory_stats(self.device)
        elif self.resettable:
            self.resettable = _reset_high_water()

    def end(self, enforce=True):
        """After a request: its peak, folded into `peak`. On the CPU with a budget, a peak past
        it is an out-of-memory (the GPU's own allocator fails at the moment instead) unless
        `enforce` is off (a request that failed anyway)."""
        if self.cuda():
            self.note_peak()
            return torch.cuda.max_memory_allocated(self.device) + self.exporter.shared_bytes
        if self.budget:
            _trim_heap()
        high = _status_bytes("VmHWM" if self.resettable else "VmRSS")
        request_peak = max(high - self.base, 0)
        self.peak = max(self.peak, request_peak)
        if enforce and self.budget and request_peak > self.budget:
            raise MemoryError("kforge's judge held %d bytes at its peak, over its memory budget "
                              "of %d" % (request_peak, self.budget))
        return request_peak

    def now(self):
        """What the judge holds now (the peak starts again from it)."""
        if self.cuda():
            return self.allocated()
        return max(self.held, _status_bytes("VmRSS") - self.base)

    def free_bytes(self):
        """What the judge may still use: the budget less what it holds, or the device's free
        memory (cached blocks count as free: they are handed back before a candidate runs)."""
        if self.cuda():
            free, _total = torch.cuda.mem_get_info(self.device)
            free += torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)
            if self.budget:
                free = min(free, self.budget - self.allocated())
            return max(int(free), 0)
        if self.budget:
            return max(self.budget - self.held, 0)
        return 0  # unknown: the host's memory is not the judge's to plan

    def plan_bytes(self):
        """The memory the judge plans a slot's keep-or-redraw choice with."""
        if self.cuda():
            _free, total = torch.cuda.mem_get_info(self.device)
            return min(total, self.budget) if self.budget else total
        return self.budget

    def take(self, nbytes):
        """Accounts bytes the judge's slots hold (CPU); refuses past the budget as an
        out-of-memory would."""
        if self.cuda():
            self.note_peak()
            return
        if self.budget and self.held + nbytes > self.budget:
            raise MemoryError("kforge's judge would hold %d bytes, over its memory budget of %d"
                              % (self.held + nbytes, self.budget))
        self.held += nbytes
        self.peak = max(self.peak, self.held)

    def note_peak(self):
        # PyTorch's peak plus the shared buffers now: close, as both peak while a trial is set.
        self.peak = max(self.peak, torch.cuda.max_memory_allocated(self.device)
                        + self.exporter.shared_bytes)

    def give(self, nbytes):
        if not self.cuda():
            self.held = max(self.held - nbytes, 0)

    def settle(self):
        """Before a candidate runs: the peak so far noted, spare cached blocks handed back."""
        if not self.cuda():
            return
        self.note_peak()
        # Memory PyTorch itself shared (before the helper was loaded) is freed only once torch
        # learns the receiver let go; a killed candidate never says so (see transport.Exporter).
        torch.cuda.ipc_collect()
        spare = torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)
        if spare > CACHE_SLACK_BYTES:
            torch.cuda.empty_cache()


def _status_bytes(field):
    """A size from /proc/self/status (VmRSS, VmHWM) in bytes; 0 where there is none."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _reset_high_water():
    """Resets the resident set's high-water mark (VmHWM); False where Linux does not let us."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# glibc's mallopt parameter: allocations of at least this many bytes get their own mapping.
_M_MMAP_THRESHOLD = -3
# Allocations of this size or more are mapped on their own with a budget on the CPU: a trial's
# tensors are, a comparison's chunks are not (1M elements: reused from the heap, no page
# faults; mapped each time, a 64 MiB output's check took 6 s instead of 1 s).
EXACT_FROM_BYTES = 16 << 20


def _exact_resident_set():
    """Large allocations get their own mapping, returned to the system when freed. glibc's
    default raises that threshold up to 32 MiB as blocks are freed and serves smaller ones from
    its heap, which keeps pages freed in its middle: the resident set would then grow with every
    draw, and a budget count memory the judge no longer holds."""
    try:
        _libc().mallopt(_M_MMAP_THRESHOLD, EXACT_FROM_BYTES)
    except (OSError, AttributeError):
        pass


def _trim_heap():
    """Pages the heap keeps free go back (after each request, with a budget on the CPU)."""
    try:
        _libc().malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _libc():
    import ctypes
    return ctypes.CDLL("libc.so.6")


class Slot:
    """One set of shared buffers: the candidate's inputs and the outputs it must write, and how
    to get the pristine inputs and reference outputs back (kept, or drawn again). The input
    and output buffers are made apart (`lay`, `outputs_like`): a trial's inputs go into their
    buffers before its reference runs, so the reference can run on the drawn tensors
    themselves instead of on copies of them."""

    def __init__(self, exporter, memory):
        self.exporter = exporter
        self.memory = memory
        self.in_bufs, self.in_descs, self.in_sig = [], [], None
        self.out_bufs, self.out_descs, self.out_sig = [], [], None
        self.recipe = None  # how the inputs were drawn: Problem.inputs_of(recipe) redraws them
        self.kept = None  # (pristine inputs, reference outputs) when small enough to keep
        self.kept_bytes = 0
        self.swapped = False  # a swapped trial: a wrong answer may be the unswapped inputs' one

    @property
    def buffer_bytes(self):
        return tensor_bytes(self.in_bufs) + tensor_bytes(self.out_bufs)

    def lay(self, inputs):
        """Copies `inputs` into the input buffers (made first, or again for other shapes)."""
        sig = _signature(inputs)
        if sig != self.in_sig:
            self._free_inputs()
            for x in inputs:
                if isinstance(x, torch.Tensor):
                    self.memory.take(tensor_bytes([x]))
                    t, d = self.exporter.new(x.shape, x.dtype)
                    self.in_bufs.append(t)
                    self.in_descs.append({"tensor": d})
                else:
                    self.in_bufs.append(x)
                    self.in_descs.append({"value": x})
            self.in_sig = sig
        for buf, x in zip(self.in_bufs, inputs):
            if isinstance(x, torch.Tensor):
                buf.copy_(x)

    def outputs_like(self, refs):
        """Output buffers of the references' shapes and dtypes (made first, or again)."""
        sig = _signature(refs)
        if sig == self.out_sig:
            return
        self._free_outputs()
        for r in refs:
            self.memory.take(tensor_bytes([r]))
            t, d = self.exporter.new(r.shape, r.dtype)
            self.out_bufs.append(t)
            self.out_descs.append(d)
        self.out_sig = sig

    def fill(self, recipe, kept=None):
        """The inputs laid and the outputs made: records how the inputs were drawn, keeps
        `kept` (pristine inputs, reference outputs) if given, and poisons the outputs."""
        self.recipe = recipe
        self.swapped = bool(recipe.get("swap_seed"))
        self.drop()
        if kept is not None:
            self.kept_bytes = tensor_bytes(kept[0]) + tensor_bytes(kept[1])
            self.memory.take(self.kept_bytes)
            self.kept = kept
        self.poison()

    def drop(self):
        if self.kept is not None:
            self.memory.give(self.kept_bytes)
        self.kept, self.kept_bytes = None, 0

    def poison(self):
        for t in self.out_bufs:
            transport.poison(t)
        device_sync(self.out_bufs[0].device if self.out_bufs else "cpu")

    def describe(self):
        return {"inputs": self.in_descs, "outputs": self.out_descs}

    def _free_inputs(self):
        self.memory.give(tensor_bytes(self.in_bufs))
        for d in self.in_descs:
            if "tensor" in d:
                self.exporter.release(d["tensor"])
        # The buffers' memory goes with their tensors (a mapped file's, a cudaFree): none may
        # stay referenced from here.
        self.in_bufs, self.in_descs, self.in_sig = [], [], None

    def _free_outputs(self):
        self.memory.give(tensor_bytes(self.out_bufs))
        for d in self.out_descs:
            self.exporter.release(d)
        self.out_bufs, self.out_descs, self.out_sig = [], [], None

    def release(self):
        self.drop()
        self._free_inputs()
        self._free_outputs()
        self.recipe = None


def _signature(values):
    def sig(x):
        if isinstance(x, torch.Tensor):
            return ("t", tuple(x.shape), str(x.dtype))
        return ("v", repr(x))
    return tuple(sig(x) for x in values)
