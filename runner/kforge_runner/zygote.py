"""The zygote: a process that has imported torch (but never touched CUDA) and forks one
candidate host per candidate, so each candidate starts in a fraction of a second in a fresh
address space. The supervisor sends `spawn` with a socket attached; the child talks to the
supervisor on that socket alone. `spawn_judge` forks, the same way, the confined judge of a
problem whose text came with a request (judge.main_confined): no request's text is imported
by the trusted judge. `reap` collects a child's exit status for the verdict.
"""
import ctypes
import os
import signal
import sys
import time

import torch  # noqa: F401  (the point of the zygote: children inherit an imported torch)
# ... and what torch.utils.cpp_extension imports, which every candidate host imports (to put
# kforge's load_inline in its place): setuptools and hipify cost 0.28 s of every candidate's
# load on the development machine (execute.load_phases_ms.host_start); with them here the
# child's own import takes 10 ms. Not cpp_extension itself: at import it asks
# torch.cuda.is_available() (to find CUDA's folder), and asking that poisons fork: every
# candidate forked after it fails "Cannot re-initialize CUDA in forked subprocess" (an H100 on
# 2026-12-06 ran the red team with it here; tests/runner/test_zygote.py keeps it out).
import setuptools  # noqa: F401,E402
import torch.utils.hipify.hipify_python  # noqa: F401,E402

if torch.cuda.is_initialized():
    raise RuntimeError("CUDA started in the zygote: its forked candidates could not use it")

from . import candidate, judge, protocol
from .channel import Channel
from .common import parse_fd

PR_SET_PDEATHSIG = 1


def _spawn(chan, msg, fd, entry):
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            chan.close()
            os.setpgid(0, 0)
            # Die with the zygote: no orphan candidate may outlive its supervisor.
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            code = entry(fd, msg)
        finally:
            os._exit(code)
    os.close(fd)
    return pid


def _reap(pid, timeout_s):
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            got, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return {"ok": False, "message": "no such child %d" % pid}
        if got == pid:
            if os.WIFSIGNALED(status):
                return {"ok": True, "signal": os.WTERMSIG(status)}
            return {"ok": True, "exit_code": os.WEXITSTATUS(status)}
        if time.monotonic() >= deadline:
            return {"ok": True, "running": True}
        time.sleep(0.005)


def _spawn_op(entry):
    def handle(chan, msg, fd):
        if fd is None:
            return {"ok": False, "message": "%s needs a socket" % msg["op"]}
        return {"ok": True, "pid": _spawn(chan, msg, fd, entry)}
    return handle


def _native(chan, msg, fd):
    candidate.preload_native(msg["path"], msg["module_name"])
    return {"ok": True}


# op -> handler(chan, msg, fd) -> reply; `exit` ends the loop. runner/protocol.json lists the
# same ops (tests/runner/test_protocol.py). spawn: a candidate host; spawn_judge: the confined
# judge of an untrusted problem; each comes with the child's socket.
HANDLERS = {
    "spawn": _spawn_op(lambda fd, msg: candidate.main(fd, msg)),
    "spawn_judge": _spawn_op(lambda fd, msg: judge.main_confined(fd, msg)),
    "reap": lambda chan, msg, fd: _reap(int(msg["pid"]), float(msg.get("timeout_s", 1.0))),
    "native": _native,
}
SOCKET_OPS = ("spawn", "spawn_judge")


def main():
    chan = Channel(parse_fd())
    while True:
        try:
            msg = chan.recv()
        except EOFError:
            return
        op = msg.get("op")
        if op == "exit":
            return
        # A socket that came with the message is taken with it, whatever the message says.
        fd = chan.take_fd() if op in SOCKET_OPS else None
        why = protocol.check_request("zygote", msg)
        if why is not None:
            if fd is not None:
                os.close(fd)
            chan.send(protocol.error_reply("zygote", why))
            continue
        chan.send(protocol.checked("zygote", op, HANDLERS[op](chan, msg, fd)))


if __name__ == "__main__":
    sys.exit(main())
