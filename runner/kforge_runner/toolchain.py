"""Facts about the toolchain torch's builder uses: where the headers and libraries the C++ side
asks about resolve (or that they do not), and where the compiler, ninja and nvcc are.

Facts only: src/build/environment.cc owns the list of files to look for, decides what a missing
one means and names the fix. Standard library only, so the build worker's `hello` stays free of
torch; given torch.utils.cpp_extension (`ce`), the search paths are the ones it really uses,
otherwise the same ones worked out without importing torch.
"""
import functools
import importlib.util
import inspect
import os
import shutil
import subprocess
import sysconfig

from . import pch


def banner_lines(cmd):
    """A tool's version banner, as lines ([] when the tool is missing)."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    return (out.stdout or out.stderr).strip().splitlines()


def banner(cmd, last=False):
    """One line of a tool's version banner ("" when the tool is missing)."""
    lines = banner_lines(cmd)
    return (lines[-1] if last else lines[0]) if lines else ""


def cxx_command():
    """The compiler torch's builder runs: $CXX, else c++ (the real one, not the PCH wrapper)."""
    return pch.real_cxx()


@functools.lru_cache(maxsize=None)
def _compiler_search_dirs(cxx):
    """The compiler's own include and library folders; empty when it does not run."""
    include, library = [], []
    try:
        out = subprocess.run([cxx, "-x", "c++", "-E", "-v", os.devnull], capture_output=True,
                             text=True, timeout=60)
        inside = False
        for line in out.stderr.splitlines():
            if line.startswith("#include <...>"):
                inside = True
            elif line.startswith("End of search list"):
                break
            elif inside and line.strip():
                include.append(line.strip())
        out = subprocess.run([cxx, "-print-search-dirs"], capture_output=True, text=True,
                             timeout=60)
        for line in out.stdout.splitlines():
            if line.startswith("libraries:"):
                library = [os.path.normpath(p) for p in line.split("=", 1)[-1].split(":") if p]
    except (OSError, subprocess.SubprocessError):
        pass
    return include, library


def _torch_dir():
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def cuda_home():
    """Where torch's builder finds CUDA (its _find_cuda_home): $CUDA_HOME, $CUDA_PATH, the
    folder above nvcc on PATH, else /usr/local/cuda; None when none exists."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if not home:
        nvcc = shutil.which("nvcc")
        home = os.path.dirname(os.path.dirname(nvcc)) if nvcc else "/usr/local/cuda"
    return home if os.path.isdir(home) else None


def _device_arg(fn, cuda):
    """The argument that asks torch's builder for CUDA's folders too: `cuda: bool` up to
    torch 2.5, `device_type: str` ("cpu", "cuda") since (where True means neither, so the CUDA
    headers would look missing on a machine that builds CUDA fine)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    if "device_type" in params:
        return "cuda" if cuda else "cpu"
    return cuda


def _builder_dirs(cuda, ce):
    """torch's own include and library folders for a build (its include_paths/library_paths)."""
    if ce is not None:
        try:
            return (list(ce.include_paths(_device_arg(ce.include_paths, cuda))),
                    list(ce.library_paths(_device_arg(ce.library_paths, cuda))))
        except (OSError, RuntimeError):  # cuda=True without a CUDA_HOME
            return (list(ce.include_paths(_device_arg(ce.include_paths, False))),
                    list(ce.library_paths(_device_arg(ce.library_paths, False))))
    torch_dir = _torch_dir()
    include, library = [], []
    if torch_dir:
        include = [os.path.join(torch_dir, "include"),
                   os.path.join(torch_dir, "include", "torch", "csrc", "api", "include")]
        library = [os.path.join(torch_dir, "lib")]
    home = cuda_home() if cuda else None
    if home:
        include.append(os.path.join(home, "include"))
        library.append(os.path.join(home, "lib64"))
    return include, library


def search_dirs(cuda, ce=None):
    """(include folders, library folders) a build searches, in the compiler's order: torch's,
    Python's include folder (torch's builder adds it), then the compiler's own."""
    include, library = _builder_dirs(cuda, ce)
    cxx_include, cxx_library = _compiler_search_dirs(cxx_command())
    return include + [sysconfig.get_paths()["include"]] + cxx_include, library + cxx_library


def _find(names, dirs):
    for d in dirs:
        for name in names:
            path = os.path.join(d, name)
            if os.path.isfile(path):
                return path
    return None


def locate(probe, cuda, ce=None):
    """{"headers": {name: path or None}, "libraries": {name: path or None}} for the names in
    `probe` (the C++ side's ToolchainProbe)."""
    include, library = search_dirs(cuda, ce)
    probe = probe or {}
    return {"headers": {h: _find([h], include) for h in probe.get("headers", [])},
            "libraries": {n: _find(["lib%s.so" % n, "lib%s.a" % n], library)
                          for n in probe.get("libraries", [])}}


def _compiles(cxx):
    """Whether the compiler turns a one-line program into an object file (its front end and
    the assembler both run); None when it could not tell."""
    try:
        out = subprocess.run([cxx, "-x", "c++", "-c", "-o", os.devnull, "-"],
                             input="int main() { return 0; }\n",
                             capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None  # a loaded machine, not a broken compiler
    except OSError:
        return False
    return out.returncode == 0


def tools(cuda):
    """Where the compiler, ninja and (for CUDA builds) nvcc are, and whether the compiler
    works."""
    cxx = cxx_command()
    path = shutil.which(cxx)
    facts = {"cxx": cxx, "cxx_path": path, "cxx_works": _compiles(cxx) if path else False,
             "ninja": shutil.which("ninja")}
    if cuda:
        home = cuda_home()
        nvcc = os.path.join(home, "bin", "nvcc") if home else None
        facts["nvcc"] = nvcc if nvcc and os.path.isfile(nvcc) else None
    return facts


def facts(probe, cuda, ce=None):
    """Everything above: what a failed build's worker reports, and doctor's toolchain facts."""
    out = locate(probe, cuda, ce)
    out.update(tools(cuda))
    return out
