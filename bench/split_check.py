#!/usr/bin/env python3
"""Split builds (runner/kforge_runner/split_build.py) against the usual light build, without a GPU.

For each candidate .py (its load_inline calls resolved by `kforge check --specs`) that the split
plans, writes the three files a build would compile and compiles them with nvcc and the host
compiler, the way torch's builder would (include folders, ABI, its nvcc flags, sm_90):

  light.cu   load_inline's cuda.cu with light headers (what kforge builds by default)
  split.cu   the split's cuda.cu: its `#include <torch/types.h>` reads the split's stand-in
  main.cpp   load_inline's main.cpp with the split's host code, against a precompiled
             torch/extension.h (made once, as kforge's build worker does)

and reports, per candidate: whether the plan was made (and why not), whether split.cu and
main.cpp compile, whether every launch stub main.cpp calls is defined by split.cu (nm), the
CPU seconds of each compile, and whether the device code is identical: one `nvcc -cubin` each
of light.cu and split.cu, the bytes of every .text.*, .nv.info.* and .nv.constant* section
compared (bench/sass_identity.py's cubin method).

  bench/split_check.py [--kforge build/kforge] [--python python3] [--limit N] [--jobs J]
                       [--json OUT] [--object-cpu] PATH...

--object-cpu also compiles light.cu to an object (host and device, as a build does) for its CPU
seconds, and where that fails the sources as written (plain.cu), as the worker would: `usual_ok`
says whether the usual build's cuda.cu compiles. Without it only the cubins are compiled on the
light side. Exit status 1 when a split
that compiled has device code different from the light build's.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "runner"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kforge_runner import light_headers, split_build  # noqa: E402
from sass_identity import checked_specs, device_sections, run_cpu, torch_flags  # noqa: E402

PREFIX = ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"]
ARCH = "sm_90"


def host_flags(python):
    """The host compiler's flags torch's builder uses for main.cpp (-I folders, ABI, C++17)."""
    return [f for f in torch_flags(python) if f.startswith("-I") or f.startswith(
        ("-DTORCH_EXTENSION_NAME", "-D_GLIBCXX_USE_CXX11_ABI"))] + ["-std=c++17", "-fPIC"]


def make_pch(work, cxx, flags):
    """A precompiled torch/extension.h under work/pch (found first through -I)."""
    d = os.path.join(work, "pch", "torch")
    os.makedirs(d, exist_ok=True)
    gch = os.path.join(d, "extension.h.gch")
    link = os.path.join(d, "extension.h")
    if not os.path.lexists(link):  # beside the .gch, as kforge's pch.py leaves it
        inc = [f[2:] for f in flags if f.startswith("-I")]
        real = next(os.path.join(i, "torch", "extension.h") for i in inc
                    if os.path.isfile(os.path.join(i, "torch", "extension.h")))
        os.symlink(real, link)
    if not os.path.exists(gch):
        src = os.path.join(work, "pch", "src.h")
        with open(src, "w") as f:
            f.write("#include <torch/extension.h>\n")
        r, out, cpu = run_cpu([cxx, "-x", "c++-header"] + flags + [src, "-o", gch], work)
        if r != 0:
            sys.exit("the precompiled header failed:\n" + out[-3000:])
        print("precompiled header: %.1f CPU-s" % cpu, flush=True)
    return os.path.join(work, "pch")


def nm_symbols(path, defined):
    r = subprocess.run(["nm", "--defined-only" if defined else "-u", path],
                       capture_output=True, text=True)
    return {line.split()[-1] for line in r.stdout.splitlines() if split_build.STUB_PREFIX in line}


def check_one(name, spec, work, nvcc, nv_flags, cxx, cxx_flags, pch, object_cpu):
    row = {"candidate": name}
    state, split, info = split_build.plan(spec, os.path.join(work, "cuda.cu"), nvcc_defines=[
        f[2:] for f in nv_flags if f.startswith("-D__CUDA_NO")])
    row["plan"] = state
    if state != "split":
        row["why"] = info
        return row
    row["kernels"] = info
    os.makedirs(work, exist_ok=True)
    shadow = os.path.join(work, "shadow", "torch")
    os.makedirs(shadow, exist_ok=True)
    with open(os.path.join(shadow, "types.h"), "w") as f:
        f.write(split_build.SHADOW_HEADER)
    sources = spec["cuda_sources"] if isinstance(spec["cuda_sources"], list) else [spec["cuda_sources"]]
    light = light_headers.rewrite(sources) or sources
    files = {"light.cu": "\n".join(PREFIX + light), "plain.cu": "\n".join(PREFIX + sources),
             "split.cu": "\n".join(PREFIX + split["cuda_sources"]),
             "main.cpp": "\n".join(["#include <torch/extension.h>"] + split["cpp_sources"])}
    for fname, text in files.items():
        with open(os.path.join(work, fname), "w") as f:
            f.write(text)
    cuda_flags = [f.strip() for f in (spec.get("extra_cuda_cflags") or []) if f.strip() not in ("", "-O3")]
    opt = ["-O3"] if "-O3" in (spec.get("extra_cuda_cflags") or []) else []
    common = nv_flags + opt + cuda_flags + ["-gencode=arch=compute_90,code=" + ARCH]
    r, out, cpu = run_cpu([nvcc, "-I", os.path.join(work, "shadow")] + common +
                          ["-c", "split.cu", "-o", "split.o"], work)
    row.update(split_ok=r == 0, split_cpu_s=round(cpu, 2))
    if r:
        row["split_error"] = out[-1500:]
    cflags = [f.strip() for f in spec.get("extra_cflags") or [] if f.strip()]  # as torch strips
    r, out, cpu = run_cpu([cxx, "-I", pch] + cxx_flags + cflags + ["-c", "main.cpp", "-o", "main.o"],
                          work)
    row.update(main_ok=r == 0, main_cpu_s=round(cpu, 2))
    if r:
        row["main_error"] = out[-1500:]
    if row["split_ok"] and row["main_ok"]:
        wanted = nm_symbols(os.path.join(work, "main.o"), False)
        have = nm_symbols(os.path.join(work, "split.o"), True)
        row["stubs_missing"] = sorted(wanted - have)
    if object_cpu:
        r, out, cpu = run_cpu([nvcc] + common + ["-c", "light.cu", "-o", "light.o"], work)
        row.update(light_ok=r == 0, light_cpu_s=round(cpu, 2))
        # The usual build: light, then as written when the light one fails (the worker's order).
        row["usual_ok"] = row["light_ok"]
        if not row["light_ok"] and light != sources:
            r, out, cpu = run_cpu([nvcc] + common + ["-c", "plain.cu", "-o", "plain.o"], work)
            row.update(plain_ok=r == 0, usual_ok=r == 0)
    if not row["split_ok"]:
        return row
    secs = {}
    for fname in ("light.cu", "split.cu"):
        args = ["-I", os.path.join(work, "shadow")] if fname == "split.cu" else []
        cub = fname + ".cubin"
        r, out, cpu = run_cpu([nvcc] + args + nv_flags + opt + cuda_flags +
                              ["-cubin", "-arch=" + ARCH, fname, "-o", cub], work)
        row[fname.split(".")[0] + "_cubin_cpu_s"] = round(cpu, 2)
        if r:
            row[fname + "_cubin_error"] = out[-800:]
            return row
        secs[fname] = device_sections(os.path.join(work, cub))
    a, b = kernel_sections(secs["light.cu"]), kernel_sections(secs["split.cu"])
    row["device_sections"] = len(a)
    row["device_identical"] = a == b and len(a) > 0
    if a != b:
        row["device_differs"] = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))[:10]
    return row


def kernel_sections(secs):
    """The sections that belong to one function (.text.F, .nv.info.F, .nv.constant0.F), with
    the symbol-table index in .nv.info's EIATTR_PARAM_CBANK zeroed: the light build's cubin
    carries more module-level symbols (libcu++ objects torch's headers bring), which moves the
    indices without changing any code. Module-level sections are left out for that reason."""
    out = {}
    for name, data in secs.items():
        m = re.match(r"\.(text|nv\.info|nv\.constant0)\.(.+)$", name)
        if not m:
            continue
        out[name] = normalise_info(data) if m.group(1) == "nv.info" else data
    return out


def normalise_info(data):
    """.nv.info records (format, attribute, value) with EIATTR_PARAM_CBANK's symbol index
    zeroed. Formats: 1 no value, 2 a byte, 3 a half word, 4 a size and that many bytes."""
    out, i = bytearray(), 0
    while i + 2 <= len(data):
        fmt, attr = data[i], data[i + 1]
        if fmt == 4:
            size = int.from_bytes(data[i + 2:i + 4], "little")
            value = bytearray(data[i + 4:i + 4 + size])
            if attr == 0x0A and size >= 4:  # EIATTR_PARAM_CBANK: symbol index, offset, size
                value[0:4] = b"\0\0\0\0"
            out += data[i:i + 4] + value
            i += 4 + size
        else:
            out += data[i:i + 4]
            i += 4
    return bytes(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--python", default="python3")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--nvcc-flags", default="-std=c++17",
                    help="added to torch's own nvcc flags (e.g. -isystem for a missing header)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--object-cpu", action="store_true")
    ap.add_argument("--work", default="")
    ap.add_argument("--time-limit-s", type=float, default=0,
                    help="start no unit after this many seconds (those started finish; the "
                         "report covers the units done)")
    a = ap.parse_args(argv)
    started = time.monotonic()
    work = a.work or tempfile.mkdtemp(prefix="split-check-")
    specs = [(n, s) for n, s in checked_specs(a.kforge, a.paths) if s.get("cuda_sources")]
    if a.limit:
        specs = specs[:a.limit]
    tf = torch_flags(a.python)
    nv_flags = tf + shlex.split(a.nvcc_flags)
    extra = shlex.split(a.nvcc_flags)
    cxx_flags = host_flags(a.python) + [x for i, f in enumerate(extra) if f == "-isystem"
                                        for x in extra[i:i + 2]]
    pch = make_pch(work, a.cxx, cxx_flags)
    rows = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = [ex.submit(check_one, n, s, os.path.join(work, "u%04d" % i), a.nvcc, nv_flags,
                          a.cxx, cxx_flags, pch, a.object_cpu) for i, (n, s) in enumerate(specs)]
        for fut in futs:
            if a.time_limit_s and time.monotonic() - started > a.time_limit_s:
                for f in futs:
                    f.cancel()
            if fut.cancelled():
                continue
            row = fut.result()
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if not k.endswith("error")}), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    planned = [r for r in rows if r["plan"] == "split"]
    built = [r for r in planned if r.get("split_ok") and r.get("main_ok") and not r.get("stubs_missing")]
    same = [r for r in built if r.get("device_identical")]
    differ = [r for r in built if r.get("device_identical") is False]
    mean = lambda k, rs: sum(r[k] for r in rs if k in r) / max(1, sum(1 for r in rs if k in r))
    if len(rows) < len(specs):
        print("time limit: %d of %d units not started" % (len(specs) - len(rows), len(specs)))
    print("units %d, planned %d, built %d, device identical %d, different %d" % (
        len(rows), len(planned), len(built), len(same), len(differ)))
    if a.object_cpu:
        # The split must never build what the usual build refuses (a wrong `ok`), and what it
        # refuses to build costs a second attempt.
        print("split built, usual failed: %d; split failed, usual built: %d" % (
            sum(1 for r in built if r.get("usual_ok") is False),
            sum(1 for r in planned if r not in built and r.get("usual_ok"))))
    print("CPU-s means over built: split.cu %.1f, main.cpp (PCH) %.1f; cubin light %.1f, split %.1f%s" % (
        mean("split_cpu_s", built), mean("main_cpu_s", built), mean("light_cubin_cpu_s", built),
        mean("split_cubin_cpu_s", built),
        (", light.cu object %.1f" % mean("light_cpu_s", built)) if a.object_cpu else ""))
    return 1 if differ or any(r.get("usual_ok") is False for r in built) else 0


if __name__ == "__main__":
    sys.exit(main())
