#!/usr/bin/env python3
"""Which CUDA IPC directions work across pid namespaces, on this machine (a GPU, root).

kforge shares trial buffers between processes with CUDA IPC (cudaIpcGetMemHandle in the judge,
cudaIpcOpenMemHandle in the candidate host). On an H100 (2026-12-05) the candidate could not
open buffers exported by an inline problem's confined judge ("invalid device context"): both
sat in pid namespaces of their own. This probe tries every pairing once, with PyTorch's own
CUDA IPC (the same driver calls), each side a fresh process, and prints one line per pairing:

  exporter    importer    result
  host        host        ok
  host        own ns      ...
  own ns      host        ...
  own ns      other ns    ...   (kforge's confined judge and candidate)
  own ns      same ns     ...

A namespace is `unshare --pid --fork --mount-proc` (util-linux; needs root). Exit 0 when every
pairing was tried (whatever it showed), 2 when the machine cannot try them (no GPU, no unshare).

  python3 bench/ipc_pidns_probe.py [--json OUT.json]
"""
import argparse
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time

N = 1 << 20  # floats in the shared buffer
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc"]


def export(folder):
    import torch
    from torch.multiprocessing.reductions import reduce_tensor
    t = torch.arange(N, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    rebuild, args = reduce_tensor(t)
    with open(os.path.join(folder, "handle.tmp"), "wb") as f:
        pickle.dump((rebuild, args), f)
    os.rename(os.path.join(folder, "handle.tmp"), os.path.join(folder, "handle"))
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(os.path.join(folder, "done")):
        time.sleep(0.05)  # the importer maps the exporter's memory: stay alive until it is done
    return 0


def import_(folder):
    deadline = time.time() + 60
    path = os.path.join(folder, "handle")
    while time.time() < deadline and not os.path.exists(path):
        time.sleep(0.05)
    import torch
    torch.cuda.init()
    result = {}
    try:
        with open(path, "rb") as f:
            rebuild, args = pickle.load(f)
        t = rebuild(*args)
        want = float(N) * (N - 1) / 2
        got = float(t.double().sum())
        result = {"ok": got == want, "detail": "sum %g, expected %g" % (got, want)}
    except Exception as e:  # noqa: BLE001 - the point is to report it
        result = {"ok": False, "detail": "%s: %s" % (type(e).__name__, str(e).splitlines()[0])}
    with open(os.path.join(folder, "result.json"), "w") as f:
        json.dump(result, f)
    open(os.path.join(folder, "done"), "w").close()
    return 0


def pairing(exporter_ns, importer_ns):
    """exporter_ns / importer_ns: None (the host's), "own" (a namespace of its own), or "same"
    (importer only: inside the exporter's namespace)."""
    folder = tempfile.mkdtemp(prefix="kforge-ipc-probe.")
    me = [sys.executable, os.path.abspath(__file__)]
    try:
        if importer_ns == "same":
            # Both in one namespace: one unshare running a shell that starts both.
            script = "%s export %s & %s import %s; wait" % (
                " ".join(me), folder, " ".join(me), folder)
            p = subprocess.run(UNSHARE + ["sh", "-c", script], capture_output=True, text=True,
                               timeout=120)
            err = p.stderr
        else:
            ex = subprocess.Popen((UNSHARE if exporter_ns else []) + me + ["export", folder],
                                  stderr=subprocess.PIPE, text=True)
            im = subprocess.run((UNSHARE if importer_ns else []) + me + ["import", folder],
                                capture_output=True, text=True, timeout=120)
            _, ex_err = ex.communicate(timeout=120)
            err = im.stderr + ex_err
        try:
            with open(os.path.join(folder, "result.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {"ok": False, "detail": "no result: " + err.strip().splitlines()[-1:][0]
                    if err.strip() else "no result"}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    if len(sys.argv) == 3 and sys.argv[1] in ("export", "import"):
        return export(sys.argv[2]) if sys.argv[1] == "export" else import_(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args()
    if shutil.which("unshare") is None or os.geteuid() != 0:
        print("ipc_pidns_probe: needs root and util-linux's unshare", file=sys.stderr)
        return 2
    import torch
    if not torch.cuda.is_available():
        print("ipc_pidns_probe: no CUDA device", file=sys.stderr)
        return 2
    rows = []
    for name, ex, im in [("host -> host", None, None), ("host -> own ns", None, "own"),
                         ("own ns -> host", "own", None), ("own ns -> other ns", "own", "own"),
                         ("own ns -> same ns", "own", "same")]:
        r = pairing(ex, im)
        rows.append(dict(r, pairing=name))
        print("%-20s %-4s %s" % (name, "ok" if r["ok"] else "FAIL", r["detail"]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "pairings": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
