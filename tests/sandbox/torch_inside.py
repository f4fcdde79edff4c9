"""End to end: torch (and CUDA with IPC from an outside process, when there is a GPU) still
works inside the sandbox, and the sandbox still holds there.

    KFORGE_SANDBOX_LIB=build/libkforge_sandbox.so PYTHONPATH=runner /usr/bin/python3 \
        tests/sandbox/torch_inside.py
Exit 0 on success; prints what failed otherwise.
"""
import json
import os
import shutil
import sys
import tempfile

import torch

from kforge_runner import sandbox, transport


def child(workdir, wr, desc_rd):
    """Runs in the forked child, like candidate.main: confine, then work."""
    sandbox.private_temp(workdir)
    state = sandbox.enter([workdir, "/dev/shm", "/dev/null"] + sandbox.device_paths() + sandbox.CUDA_PROC,
                          256 * sandbox.MIB, 60)
    problems = []
    if not state.startswith("on:"):
        problems.append("not confined: " + state)
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    if float((x @ x.T).sum()) != 1134.0:
        problems.append("cpu matmul is wrong")
    for path in ("/tmp/kforge-escape", os.path.join(os.path.dirname(workdir), "escape")):
        try:
            open(path, "w").close()
            problems.append("could write " + path)
        except OSError:
            pass
    with open(os.path.join(workdir, "inside.txt"), "w") as f:
        f.write("ok")
    ipc_desc = json.loads(_read_all(desc_rd) or b"null")
    if ipc_desc is not None:
        y = torch.ones(1024, device="cuda") * 3
        torch.cuda.synchronize()
        if float(y.sum()) != 3072.0:
            problems.append("cuda op is wrong")
        out = transport.open_buffer(ipc_desc)  # the parent's memory through CUDA IPC
        out.copy_(torch.full_like(out, 7.0))
        torch.cuda.synchronize()
    os.write(wr, json.dumps({"state": state, "problems": problems}).encode())


def _read_all(fd):
    data = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return data
        data += chunk


def main():
    workdir = tempfile.mkdtemp(prefix="kforge-sbx-e2e-")
    # Only the availability check before the fork: CUDA cannot start in a child of a process
    # that started it (the zygote never does).
    cuda = os.path.exists("/dev/nvidiactl")
    shared = None
    rd, wr = os.pipe()
    desc_rd, desc_wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(rd)
            os.close(desc_wr)
            child(workdir, wr, desc_rd)
            code = 0
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(wr)
    os.close(desc_rd)
    desc = None
    if cuda:
        # The judge's side: device memory exported to the (already confined) child.
        exporter = transport.Exporter("cuda", "/dev/shm")
        shared, desc = exporter.new([256], torch.float32)
        shared.zero_()
        torch.cuda.synchronize()
    os.write(desc_wr, json.dumps(desc).encode())
    os.close(desc_wr)
    data = _read_all(rd)
    _, status = os.waitpid(pid, 0)
    report = json.loads(data) if data else {"problems": ["child died, wait status %d" % status]}
    problems = report["problems"]
    if status != 0:
        problems.append("child wait status %d" % status)
    if not os.path.exists(os.path.join(workdir, "inside.txt")):
        problems.append("the workdir was not writable")
    if cuda and float(shared.sum()) != 7.0 * 256:
        problems.append("CUDA IPC write from the sandbox did not arrive")
    shutil.rmtree(workdir, ignore_errors=True)
    print("sandbox:", report.get("state"))
    print("probe:", json.dumps(sandbox.probe()))
    print("cuda:", cuda)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
