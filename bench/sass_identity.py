#!/usr/bin/env python3
"""Does light headers change device code? For each CUDA translation unit, compiles it with nvcc
as written and with the rewrite kforge's --light-headers makes (runner/kforge_runner/
light_headers.py: the first `#include <torch/extension.h>` becomes `#include <torch/types.h>`),
with the same command line, in the same folder, from the same file name, and compares the
device code of the two objects. Also prints nvcc's CPU seconds both ways.

  bench/sass_identity.py [--method auto|sass|cubin] [--jobs N] [--json OUT] PATH...
  bench/sass_identity.py --pairs BUILD_CPU.json [--json OUT]

PATH is a kforge build artifact (CACHE/artifacts/<key>/, where torch's builder left build.ninja
and cuda.cu: the command line is build.ninja's), a folder of them (CACHE/artifacts), a
standalone .cu file, or a candidate .py file (its load_inline calls resolved by `kforge check
--specs`, cuda.cu written as load_inline writes it); the last two are compiled with
--nvcc-flags (default: sm_90), candidates also with the include folders, ABI and nvcc flags that
--python's torch gives its builder.

Methods:
  sass   `cuobjdump -sass` of both objects, compared function by function (lines naming files
         dropped). Needs cuobjdump (CUDA toolkit; beside nvcc or on PATH).
  cubin  one `nvcc -cubin` per real architecture of the command line, and the bytes of every
         .text.* (machine code), .nv.info.* and .nv.constant* section compared: identical
         machine code is identical SASS. Works where cuobjdump is missing (no GPU needed).
  auto   sass where cuobjdump is found, else cubin.
The CPU seconds are nvcc's whole compile with sass (host code too), the device side alone with
cubin.

--pairs compares the objects bench/build_cpu.py --keep DIR --out BUILD_CPU.json left: each
candidate's cuda.cuda.o built as written and with --light-headers by kforge's own build worker
(where the light build was used), with cuobjdump -sass; nothing is compiled again.

It compares the rewrite itself, without the worker's check of the macros the sources test: it is
stricter than what kforge builds. Host code is not compared (other headers, other inline
functions); verdicts cover it (the CUDA examples and red team with and without the flag).
Exit status: 0 when no compared unit differs, 1 otherwise. Standard library and the CUDA toolkit
only.
"""
import argparse
import json
import os
import re
import concurrent.futures
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "runner"))
from kforge_runner import light_headers  # noqa: E402  (standard library only)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_breakdown import ninja_vars  # noqa: E402  (what torch's build.ninja sets)

DEFAULT_FLAGS = "-O3 -std=c++17 -gencode=arch=compute_90,code=sm_90"


def checked_specs(kforge, paths, cwd=None):
    """(name, spec) of every statically resolved load_inline call in candidate .py files, as
    `kforge check --json --specs` gives them; a file's second call is named "file#1"."""
    r = subprocess.run([kforge, "check", "--json", "--specs"] + paths, capture_output=True,
                       text=True, cwd=cwd)
    if r.returncode not in (0, 1):
        sys.exit("kforge check failed: " + r.stderr[-2000:])
    out = []
    for line in r.stdout.splitlines():
        row = json.loads(line)
        for i, spec in enumerate(row.get("specs", [])):
            out.append((row["candidate"] + ("#%d" % i if i else ""), spec))
    return out


def candidate_units(kforge, paths, work):
    """cuda.cu of each statically resolved load_inline call of candidate .py files, written as
    load_inline writes it (its three includes, then the CUDA sources), under `work`."""
    out = []
    for name, spec in checked_specs(kforge, paths):
        if not spec.get("cuda_sources"):
            continue
        d = os.path.join(work, str(len(out)))
        os.makedirs(d)
        cu = os.path.join(d, "cuda.cu")
        with open(cu, "w") as f:
            f.write("\n".join(["#include <torch/types.h>", "#include <cuda.h>",
                               "#include <cuda_runtime.h>"] + spec["cuda_sources"]))
        out.append((name, cu))
    return out


def torch_flags(python):
    """What torch's builder adds for a CUDA extension: its and Python's include folders, the extension name,
    the C++ ABI and its common nvcc flags, as `python`'s torch says (empty without torch)."""
    code = r"""
import json, sysconfig, torch
from torch.utils import cpp_extension as e
try:
    inc = e.include_paths(device_type="cuda")
except TypeError:
    inc = e.include_paths(cuda=True)
inc = list(inc) + [sysconfig.get_paths()["include"]]  # Python.h, as the builder adds it
abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", 1))
print(json.dumps(["-I" + p for p in inc] + ["-DTORCH_EXTENSION_NAME=sass_unit",
      "-D_GLIBCXX_USE_CXX11_ABI=%d" % abi] + list(getattr(e, "COMMON_NVCC_FLAGS", []))))
"""
    r = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s could not give torch's build flags: %s" % (python, r.stderr[-1000:]))
    return json.loads(r.stdout)


def units(paths, nvcc, flags, kforge="", work="", python="python3"):
    """(name, cuda.cu path, nvcc argv before the source, argv after it) for every PATH."""
    out = []
    py = [p for p in paths if p.endswith(".py")]
    if py:
        # A candidate's cuda.cu includes torch: compiled with the flags torch's builder adds.
        extra = torch_flags(python)
        for name, cu in candidate_units(kforge, py, work):
            out.append((name, cu, [nvcc] + shlex.split(flags) + extra, []))
    for p in paths:
        if p.endswith(".py"):
            continue
        if os.path.isfile(p) and p.endswith(".cu"):
            out.append((p, p, [nvcc] + shlex.split(flags), []))
            continue
        dirs = [p] if os.path.isfile(os.path.join(p, "build.ninja")) else sorted(
            os.path.join(p, d) for d in os.listdir(p) if os.path.isfile(os.path.join(p, d, "build.ninja")))
        for d in dirs:
            cu = os.path.join(d, "cuda.cu")
            if not os.path.isfile(cu):
                continue  # a C++-only extension
            v = ninja_vars(os.path.join(d, "build.ninja"))
            out.append((d, cu, shlex.split(v.get("nvcc", nvcc)) + shlex.split(v.get("cuda_cflags", "")),
                        shlex.split(v.get("cuda_post_cflags", ""))))
    return out


def run_cpu(cmd, cwd):
    """Runs `cmd`; (exit status, output, CPU seconds of it and its children). wait4 on the one
    process, so that units compiled at the same time (--jobs) are each counted alone."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return p.returncode, text, usage.ru_utime + usage.ru_stime


# --- SASS text (cuobjdump) ------------------------------------------------------------------

def parse_sass(text):
    """cuobjdump -sass output as {"<arch> <function>": [instruction lines]}; lines that name
    files (identifier = ...) or carry no code are dropped."""
    out, arch, fn = {}, "", None
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("identifier") or set(s) <= {"=", "."}:
            continue
        m = re.match(r"(?:arch = |code for )(sm_\w+)", s)
        if m:
            arch, fn = m.group(1), None
            continue
        m = re.match(r"Function : (\S+)", s)
        if m:
            fn = "%s %s" % (arch, m.group(1))
            out[fn] = []
            continue
        if fn is not None:
            out[fn].append(re.sub(r"\s+", " ", s))
    return out


def sass_of(cuobjdump, obj):
    r = subprocess.run([cuobjdump, "-sass", obj], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("cuobjdump -sass %s: %s" % (obj, r.stderr.strip()[-500:]))
    return parse_sass(r.stdout)


# --- cubin sections (no cuobjdump) ----------------------------------------------------------

DEVICE_SECTIONS = re.compile(r"\.text\.|\.nv\.info\.|\.nv\.constant\d*\.|\.nv\.shared\.")


def elf_sections(data):
    """{section name: bytes} of a 64-bit little-endian ELF file (a cubin); NOBITS sections map
    to their size, as text."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_off = heads[shstrndx][4]
    out = {}
    for name_at, kind, _flags, _addr, off, size, *_ in heads:
        end = data.index(b"\0", names_off + name_at)
        name = data[names_off + name_at:end].decode()
        out[name] = ("NOBITS %d" % size).encode() if kind == 8 else data[off:off + size]
    return out


def device_sections(path):
    with open(path, "rb") as f:
        return {k: v for k, v in elf_sections(f.read()).items() if DEVICE_SECTIONS.match(k)}


def real_archs(argv):
    """The sm_XX each -gencode/-arch of nvcc's command line compiles machine code for."""
    archs = []
    for a in argv:
        for m in re.finditer(r"code=\[?([\w,]+)\]?|^-arch=(sm_\w+)$|^--gpu-architecture=(sm_\w+)$", a):
            for c in (m.group(1) or m.group(2) or m.group(3)).split(","):
                if c.startswith("sm_") and c not in archs:
                    archs.append(c)
    return archs


def cubin_argv(argv, arch, out):
    """nvcc's command line with its outputs and architectures replaced: one cubin for `arch`."""
    keep, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("-c", "--compile"):
            continue
        if a in ("-o", "--output-file", "-gencode", "--generate-code", "-arch", "--gpu-architecture"):
            skip = True
            continue
        if a.startswith(("-gencode=", "--generate-code=", "-arch=", "--gpu-architecture=")):
            continue
        keep.append(a)
    return keep + ["-cubin", "-arch=" + arch, "-o", out]


# --- one unit -------------------------------------------------------------------------------

def compare(name, cu, pre, post, method, cuobjdump, keep, object_cpu=False):
    with open(cu) as f:
        text = f.read()
    light = light_headers.rewrite([text])
    row = {"unit": name}
    if light is None:
        row["result"] = "unchanged"  # nothing to rewrite: the same build either way
        return row
    work = tempfile.mkdtemp(prefix="kforge-sass-")
    src = os.path.join(work, "cuda.cu")  # one path for both: nothing differs but the include
    try:
        made = {}
        for way, body in (("as_written", text), ("light", light[0])):
            with open(src, "w") as f:
                f.write(body)
            if method == "sass":
                obj = os.path.join(work, way + ".o")
                rc, log, cpu = run_cpu(pre + ["-c", src, "-o", obj] + post, work)
                made[way] = obj
            else:
                if object_cpu:  # the whole compile (host code too), for its CPU seconds
                    rc, log, c = run_cpu(pre + ["-c", src, "-o", os.path.join(work, way + ".o")] + post, work)
                    row["cpu_s_object_" + way] = round(c, 2)
                    if rc != 0 and way == "light":
                        row.update(result="fell_back", message=log.strip()[-600:])
                        return row
                cpu, rc, log = 0.0, 0, ""
                made[way] = {}
                for arch in real_archs(pre + post):
                    out = os.path.join(work, "%s.%s.cubin" % (way, arch))
                    rc, log, c = run_cpu(cubin_argv(pre + [src] + post, arch, out), work)
                    cpu += c
                    if rc != 0:
                        break
                    made[way][arch] = out
            row["cpu_s_" + way] = round(cpu, 2)
            if rc != 0:
                if way == "as_written":
                    row.update(result="error", message=log.strip()[-1500:])
                else:  # kforge would build it as written: nothing of the light build is used
                    row.update(result="fell_back", message=log.strip()[-600:])
                return row
        if method == "sass":
            a, b = sass_of(cuobjdump, made["as_written"]), sass_of(cuobjdump, made["light"])
            row["functions"] = len(a)
        else:
            a, b = {}, {}
            for arch in made["as_written"]:
                for k, v in device_sections(made["as_written"][arch]).items():
                    a[arch + " " + k] = v
                for k, v in device_sections(made["light"][arch]).items():
                    b[arch + " " + k] = v
            row["sections"] = len(a)
        differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        row["result"] = "differs" if differ else "identical"
        if differ:
            row["differing"] = differ[:20]
        if not a:
            row["result"] = "no_device_code"
        return row
    finally:
        if keep:
            dest = os.path.join(keep, re.sub(r"[^\w.-]", "_", name.strip("/"))[-120:])
            shutil.copytree(work, dest, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def compare_pairs(path, cuobjdump):
    """Rows for bench/build_cpu.py's kept builds: cuda.cuda.o as written against light."""
    with open(path) as f:
        builds = json.load(f)["builds"]
    rows = []
    for b in builds:
        row = {"unit": b["candidate"]}
        if b.get("light_headers") != "used":
            row["result"] = b.get("light_headers", "unchanged")
            rows.append(row)
            continue
        objs = [os.path.join(b[k], "cuda.cuda.o") for k in ("plain_dir", "light_dir")]
        if not all(os.path.isfile(o) for o in objs):
            row.update(result="error", message="no cuda.cuda.o in %s" % " or ".join(objs))
            rows.append(row)
            continue
        a, c = sass_of(cuobjdump, objs[0]), sass_of(cuobjdump, objs[1])
        differ = sorted(k for k in set(a) | set(c) if a.get(k) != c.get(k))
        row.update(result="differs" if differ else ("identical" if a else "no_device_code"),
                   functions=len(a), cpu_s_as_written=b["cpu_s"], cpu_s_light=b["light_cpu_s"])
        if differ:
            row["differing"] = differ[:20]
        rows.append(row)
    return rows


def find_cuobjdump(nvcc):
    beside = os.path.join(os.path.dirname(shutil.which(nvcc) or nvcc), "cuobjdump")
    return beside if os.access(beside, os.X_OK) else shutil.which("cuobjdump")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--pairs", default="", help="bench/build_cpu.py's --out JSON of a run with --keep")
    ap.add_argument("--method", choices=["auto", "sass", "cubin"], default="auto")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc",
                    help="nvcc for standalone .cu files (artifacts use build.ninja's)")
    ap.add_argument("--nvcc-flags", default=DEFAULT_FLAGS, help="for standalone .cu files")
    ap.add_argument("--json", default="", help="write the rows here too")
    ap.add_argument("--keep", default="", help="copy each unit's objects and logs here")
    ap.add_argument("--jobs", type=int, default=1, help="units compiled at the same time")
    ap.add_argument("--object-cpu", action="store_true",
                    help="with cubin: also compile each unit to an object both ways, for nvcc's "
                         "whole CPU time (host code included)")
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"),
                    help="for candidate .py files: resolves their load_inline calls")
    ap.add_argument("--python", default="python3",
                    help="for candidate .py files: the Python whose torch gives the include "
                         "folders and flags")
    a = ap.parse_args(argv)
    cuobjdump = find_cuobjdump(a.nvcc)
    method = a.method
    if method == "auto":
        method = "sass" if cuobjdump else "cubin"
    if method == "sass" and not cuobjdump:
        sys.exit("cuobjdump not found (beside %s or on PATH); use --method cubin" % a.nvcc)
    print("method: %s%s" % (method, " (%s)" % cuobjdump if method == "sass" else ""), flush=True)
    work = tempfile.mkdtemp(prefix="kforge-sass-units-")
    if a.pairs:
        if method != "sass":
            sys.exit("--pairs compares objects with cuobjdump: it needs --method sass")
        todo = []
        rows = compare_pairs(a.pairs, cuobjdump)
        for row in rows:
            print("%-10s %s" % (row["result"], row["unit"]))
            for k in row.get("differing", [])[:5]:
                print("           differs: " + k)
    else:
        todo = units(a.paths, a.nvcc, a.nvcc_flags, a.kforge, work, a.python)
        if not todo:
            sys.exit("no CUDA translation unit found in " + " ".join(a.paths))
        rows = []
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        futures = [pool.submit(compare, name, cu, pre, post, method, cuobjdump, a.keep, a.object_cpu)
                   for name, cu, pre, post in todo]
        for future in futures:  # printed in order, as each is done
            row = future.result()
            rows.append(row)
            name = row["unit"]
            cpu = ""
            if "cpu_s_light" in row:
                cpu = "  %s %.1f -> %.1f CPU-s" % ("nvcc" if method == "sass" else "nvcc -cubin (device side)",
                                                 row["cpu_s_as_written"], row["cpu_s_light"])
            print("%-10s %s%s" % (row["result"], name, cpu), flush=True)
            for k in row.get("differing", [])[:5]:
                print("           differs: " + k)
            if "cpu_s_object_light" in row:
                print("           nvcc -c %.1f -> %.1f CPU-s" % (row["cpu_s_object_as_written"],
                                                              row["cpu_s_object_light"]))
            if row["result"] in ("error", "fell_back") and row["message"]:
                print("           " + row["message"].splitlines()[-1][:200])
    counts = {}
    for r in rows:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    both = [r for r in rows if r["result"] in ("identical", "differs", "no_device_code")]
    summary = {"method": method, "units": len(rows), "counts": counts}
    if both:
        summary["nvcc_cpu_s_as_written"] = round(sum(r["cpu_s_as_written"] for r in both) / len(both), 2)
        summary["nvcc_cpu_s_light"] = round(sum(r["cpu_s_light"] for r in both) / len(both), 2)
        if all("cpu_s_object_light" in r for r in both):
            summary["nvcc_object_cpu_s_as_written"] = round(
                sum(r["cpu_s_object_as_written"] for r in both) / len(both), 2)
            summary["nvcc_object_cpu_s_light"] = round(
                sum(r["cpu_s_object_light"] for r in both) / len(both), 2)
    if a.pairs:  # the CPU of whole builds (main.cpp, cuda.cu, link), as build_cpu.py measured
        for way in ("as_written", "light"):
            if "nvcc_cpu_s_" + way in summary:
                summary["build_cpu_s_" + way] = summary.pop("nvcc_cpu_s_" + way)
    print("summary: " + json.dumps(summary))
    shutil.rmtree(work, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"summary": summary, "rows": rows}, f, indent=1)
    return 1 if counts.get("differs") or counts.get("error") else 0


if __name__ == "__main__":
    sys.exit(main())
