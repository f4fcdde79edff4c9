"""The trusted judge's side of borrowed buffers: what it lends the confined judge of an untrusted
problem (judge.py's op_lend and op_reclaim; the confined judge's side is transport.Borrower).

A CUDA IPC handle made in the confined judge's pid namespace does not open in the candidate
host's; one the trusted judge makes (the host's namespace) opens in both (docs/SECURITY.md). So
the trusted judge makes every shared buffer of an untrusted problem's trials and keeps it until
it is given back or kforge reclaims what a stopped confined judge held.
"""
import os

from . import transport


class Lender:
    def __init__(self):
        self.lent = {}  # id -> (tensor, descriptor)
        self.count = 0

    def lend(self, exporter, memory, msg):
        """A buffer of msg's shape and dtype, made with `exporter` and kept: the reply."""
        dtype = transport.DTYPES.get(msg["dtype"])
        shape = msg["shape"]
        if dtype is None:
            return {"ok": False, "message": "no such dtype %r" % msg["dtype"]}
        if any(d < 0 for d in shape) or len(shape) > 16:
            return {"ok": False, "message": "not a tensor's shape: %r" % (shape,)}
        nbytes = transport.numel(shape) * transport.element_size(dtype)
        free = memory.free_bytes()
        if memory.cuda() and nbytes > free:
            return {"ok": False, "message": "a %d-byte buffer does not fit the device's %d free "
                                            "bytes" % (nbytes, free)}
        # What the untrusted problem may hold at once: the device's memory, or the machine's
        # (a CPU buffer is a file in /dev/shm, memory once written).
        limit = limit_of(memory)
        held = sum(t.numel() * t.element_size() for t, _ in self.lent.values())
        if held + nbytes > limit:
            return {"ok": False, "message": "lending %d more bytes would hold %d, over the %d "
                                            "an untrusted problem may" % (nbytes, held + nbytes,
                                                                          limit)}
        t, desc = exporter.new(shape, dtype, counted=False)
        self.count += 1
        self.lent[self.count] = (t, desc)
        return {"ok": True, "buffer": desc, "id": self.count}

    def reclaim(self, exporter, ids=None):
        """Frees the buffers lent under `ids` (None: every one): the reply."""
        freed = 0
        for i in list(self.lent) if ids is None else ids:
            got = self.lent.pop(i, None)
            if got is None:
                continue
            t, desc = got
            del t, got
            exporter.release(desc, counted=False)
            freed += 1
        return {"ok": True, "freed": freed}


def limit_of(memory):
    """The most bytes the trusted judge lends at once: the memory budget where one is set, else
    the device's memory, else the machine's."""
    if memory.budget:
        return memory.budget
    if memory.cuda():
        return memory.plan_bytes()
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 1 << 40
