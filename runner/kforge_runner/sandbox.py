"""Confines a freshly forked child with libkforge_sandbox (our C++), before untrusted code runs.

The supervisor names the library in KFORGE_SANDBOX_LIB. Without it the runner still works and
says so ("unavailable: ..."), so a verdict can carry that its run was not confined. A library
that is there but fails to confine is an infra error, never a silent pass.
"""
import ctypes
import glob
import json
import os
import tempfile

MIB = 1 << 20
# CUDA's start-up writes under /proc/self (found on the H200: cudaGetDeviceCount fails with
# error 304 otherwise). In the sandbox's own /proc that is this process alone; /proc/sys and
# /proc/sysrq-trigger stay read-only.
CUDA_PROC = ["/proc/self"]


class SandboxError(Exception):
    pass


def device_paths():
    """The GPU device files CUDA writes to (ioctls included)."""
    return sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri/renderD*"))


def private_temp(folder):
    """Points temporary files and every cache we know of at `folder` (before they are used)."""
    os.environ["TMPDIR"] = folder
    os.environ["CUDA_CACHE_PATH"] = os.path.join(folder, ".nv")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(folder, ".triton")
    os.environ["XDG_CACHE_HOME"] = os.path.join(folder, ".cache")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(folder, ".inductor")
    tempfile.tempdir = None  # recomputed from TMPDIR on next use


def enter(writable, max_file_bytes, cpu_seconds, max_processes=4096):
    """Confines this process (and its children). Returns "on: <what is enforced>" or
    "unavailable: <why>"; raises SandboxError when the library is there but entering fails.
    With a pid namespace the call forks: it returns in the confined child; the caller's process
    stays behind as a relay that ends as the child ends."""
    path = os.environ.get("KFORGE_SANDBOX_LIB")
    if not path:
        return "unavailable: KFORGE_SANDBOX_LIB is not set"
    try:
        # PyDLL keeps the GIL across the call: the fork inside happens with a consistent GIL.
        lib = ctypes.PyDLL(path)
    except OSError as e:
        return "unavailable: %s" % e
    policy = {"writable": [p for p in writable if p], "network": False,
              "max_file_bytes": int(max_file_bytes), "cpu_seconds": int(cpu_seconds),
              "max_processes": int(max_processes), "new_pid_namespace": True}
    err = ctypes.create_string_buffer(4096)
    lib.kforge_sandbox_enter.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    rc = lib.kforge_sandbox_enter(json.dumps(policy).encode(), err, len(err))
    text = err.value.decode(errors="replace")
    if rc != 0:
        raise SandboxError("sandbox: " + text)
    return "on: " + text


# The limits of every process that runs untrusted code: a candidate host, and the judge of a
# problem whose text came with a request (judge.main_confined).
UNTRUSTED_FILE_BYTES = 256 * MIB
UNTRUSTED_CPU_SECONDS = 600


def confine(workdir, jit_cache=None):
    """Points temporary files at `workdir`, then enters the sandbox with the untrusted limits
    (writable: `workdir`, /dev/shm, the GPU device files, /proc/self, and `jit_cache` when
    given: the Triton cache of this candidate's text, under kforge's cache). Call it before
    CUDA starts and before any untrusted code. Returns (state, error): error is None when the
    process may go on, state is "on: ..." or "unavailable: ..."."""
    if workdir:
        private_temp(workdir)
    if jit_cache:
        os.environ["TRITON_CACHE_DIR"] = jit_cache
    writable = candidate_writable(workdir, jit_cache)
    try:
        return enter(writable, UNTRUSTED_FILE_BYTES, UNTRUSTED_CPU_SECONDS), None
    except SandboxError as e:
        return "failed", str(e)


def candidate_writable(workdir, jit_cache=None):
    """Every path a candidate process may write."""
    return [workdir, jit_cache, "/dev/shm", "/dev/null"] + device_paths() + CUDA_PROC


def probe():
    """What this kernel supports, as a dict (empty without the library)."""
    path = os.environ.get("KFORGE_SANDBOX_LIB")
    if not path:
        return {}
    out = ctypes.create_string_buffer(4096)
    if ctypes.PyDLL(path).kforge_sandbox_probe(out, len(out)) != 0:
        return {}
    return json.loads(out.value.decode())
