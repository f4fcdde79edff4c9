#!/usr/bin/env python3
"""Where one candidate's build time goes: recompiles the sources of a kforge build artifact
(cache/artifacts/<key>/, kept by torch's builder with its build.ninja) one at a time, and prints
the CPU seconds of
  - main.cpp with the plain compiler, and through kforge's wrapper with the precompiled
    torch/extension.h of --pch-dir (when one matches its flags),
  - cuda.cu with nvcc, per nvcc phase (nvcc --time): host preprocessing, cudafe++, cicc, ptxas,
    the host compile.
Usage: bench/build_breakdown.py ARTIFACT_DIR [--pch-dir CACHE/pch] [--repeat N]
"""
import argparse
import csv
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile

RUNNER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runner")


def ninja_vars(path):
    out = {}
    with open(path) as f:
        for line in f:
            if " = " in line and not line.startswith(" "):
                k, v = line.rstrip("\n").split(" = ", 1)
                out[k.strip()] = v
    return out


def cpu_of(cmd, cwd, env=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("artifact")
    ap.add_argument("--pch-dir", default="")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    v = ninja_vars(os.path.join(a.artifact, "build.ninja"))
    real = os.environ.get("KFORGE_REAL_CXX") or shutil.which(os.environ.get("CXX", "c++"))
    work = tempfile.mkdtemp(prefix="kforge-breakdown-")
    try:
        for src in ("main.cpp", "cuda.cu"):
            if not os.path.exists(os.path.join(a.artifact, src)):
                continue
            shutil.copy(os.path.join(a.artifact, src), os.path.join(work, src))
        if os.path.exists(os.path.join(work, "main.cpp")):
            flags = shlex.split(v.get("cflags", "")) + ["-c", os.path.join(work, "main.cpp"),
                                                        "-o", "main.o"] + shlex.split(v.get("post_cflags", ""))
            for i in range(a.repeat):
                plain = cpu_of([real] + flags, work)
                line = "main.cpp  %s: %.1f CPU-s" % (os.path.basename(real), plain)
                if a.pch_dir:
                    env = dict(os.environ, KFORGE_PCH_DIR=os.path.abspath(a.pch_dir), KFORGE_REAL_CXX=real)
                    wrapped = cpu_of([sys.executable, os.path.join(RUNNER, "kforge_runner", "pch.py"), "cxx"]
                                     + flags, work, env)
                    want = os.path.join(work, "kforge-pch-want.json")
                    used = os.path.exists(want) and '"used": true' in open(want).read()
                    line += "; with the precompiled header: %.1f CPU-s (%s)" % (
                        wrapped, "used" if used else "none matched")
                print(line, flush=True)
        if os.path.exists(os.path.join(work, "cuda.cu")):
            nvcc = shlex.split(v.get("nvcc", "nvcc"))
            for i in range(a.repeat):
                times = os.path.join(work, "nvcc-time.csv")
                if os.path.exists(times):
                    os.unlink(times)
                cmd = nvcc + ["--time", times] + shlex.split(v.get("cuda_cflags", "")) + [
                    "-c", os.path.join(work, "cuda.cu"), "-o", "cuda.o"] + shlex.split(v.get("cuda_post_cflags", ""))
                total = cpu_of(cmd, work)
                phases = []
                with open(times) as f:
                    for row in csv.reader(f):
                        if len(row) > 6 and row[6].strip().replace(".", "", 1).isdigit():
                            phases.append((row[1].strip(), float(row[6]) / 1000))
                print("cuda.cu   nvcc: %.1f CPU-s; phases (wall s): %s" % (
                    total, ", ".join("%s %.1f" % p for p in phases if p[1] >= 0.05)), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
