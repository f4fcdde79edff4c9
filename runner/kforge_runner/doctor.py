"""Facts for `kforge doctor`: this interpreter, its torch, and where the toolchain's parts are.

Usage: python -m kforge_runner.doctor '{"backend": "cpu", "probe": {...}}'
Prints one JSON object on stdout and decides nothing: src/doctor/ turns the facts into checks
and fixes. Works with whatever is installed: without torch it still reports the rest.
"""
import json
import os
import platform
import sys

from . import toolchain


def _torch():
    """(facts about torch, torch.utils.cpp_extension or None)."""
    try:
        import torch
        import torch.utils.cpp_extension as ce
    except Exception as e:  # a broken install is a fact too, whatever it raises
        return {"error": "%s: %s" % (type(e).__name__, e)}, None
    return {"version": str(torch.__version__), "cuda": torch.version.cuda,
            "path": os.path.dirname(torch.__file__)}, ce


def _cuda_devices(facts):
    """How many GPUs this torch sees, for a torch built with CUDA."""
    if not facts.get("cuda"):
        return
    try:
        import torch
        facts["device_count"] = torch.cuda.device_count()
    except Exception as e:
        facts["device_error"] = "%s: %s" % (type(e).__name__, e)


def main():
    request = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    cuda = request.get("backend") == "cuda"
    torch_facts, ce = _torch()
    _cuda_devices(torch_facts)
    found = toolchain.locate(request.get("probe"), cuda, ce)
    found.update(toolchain.tools(True))  # nvcc on every backend: doctor shows it on cpu too
    nvcc = found.get("nvcc")
    out = {"python": {"executable": sys.executable, "version": platform.python_version()},
           "torch": torch_facts,
           "toolchain": found,
           "cxx_version": toolchain.banner([found["cxx"], "--version"]),
           "nvcc_release": _nvcc_release(nvcc) if nvcc else ""}
    sys.stdout.write(json.dumps(out) + "\n")


def _nvcc_release(nvcc):
    """The line of `nvcc --version` that names the release ("... release 12.4, V12.4.131")."""
    for line in toolchain.banner_lines([nvcc, "--version"]):
        if "release" in line:
            return line
    return ""


if __name__ == "__main__":
    main()
