"""Build worker: compiles extensions exactly as torch.utils.cpp_extension.load_inline would.

One long-lived process per pool slot. `hello` answers without importing torch (the toolchain
fingerprint is read from files and compiler banners) so a cache lookup costs no torch import.
Each build runs in a forked child so torch's in-process extension versioning starts fresh and
a compiler crash or hang takes only that child; the C++ supervisor owns the time limit.
"""
import copy
import importlib.util
import inspect
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import traceback

from . import bindings, light_headers, pch, protocol, sandbox, split_build, toolchain
from .channel import Channel
from .common import named

BUILD_FILE_BYTES = 1024 * sandbox.MIB
BUILD_CPU_SECONDS = 1800

_ce = None


def _torch_version_info():
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "version.py")
    info = {}
    try:
        with open(path) as f:
            exec(compile(f.read(), path, "exec"), {}, info)  # torch's own generated constants
    except OSError:
        return None
    return {"torch": str(info.get("__version__")), "torch_cuda": str(info.get("cuda")),
            "torch_git": str(info.get("git_version"))}


def _cuda_arch_list():
    env = os.environ.get("TORCH_CUDA_ARCH_LIST")
    if env:
        return env
    # Ask the driver through nvidia-smi rather than CUDA: this process forks build children and
    # must never initialise CUDA itself.
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        caps = sorted({c.strip() for c in out.stdout.splitlines() if c.strip()})
        return ";".join(caps)
    except (OSError, subprocess.SubprocessError):
        return ""


def hello(msg):
    info = _torch_version_info()
    if info is None:
        return {"ok": False, "message": "PyTorch is not installed for %s" % sys.executable}
    cuda = msg.get("backend") == "cuda"
    fp = {"python": sys.version.split()[0], "executable": sys.executable,
          "cxx": toolchain.banner([os.environ.get("CXX", "c++"), "--version"])}
    fp.update(info)
    # Where the headers and libraries builds need resolve, or None: installing a missing one
    # changes the fingerprint, so no artifact cached before (a failure) is found again.
    fp["toolchain"] = toolchain.locate(msg.get("probe"), cuda)
    if cuda:
        fp["nvcc"] = toolchain.banner(["nvcc", "--version"], last=True)
        arch = _cuda_arch_list()
        fp["arch"] = arch
        if arch:
            os.environ["TORCH_CUDA_ARCH_LIST"] = arch
    return {"ok": True, "protocol": protocol.VERSION, "fingerprint": fp}


def _source_layout(build_dir, spec, texts=None):
    """Where each source string starts (1-based line) in the files torch generated (or in
    `texts`, file name to text, where given)."""
    layout = {}
    for fname, key in (("main.cpp", "cpp_sources"), ("cuda.cu", "cuda_sources")):
        path = os.path.join(build_dir, fname)
        try:
            if texts and fname in texts:
                text = texts[fname]
            else:
                with open(path) as f:
                    text = f.read()
        except OSError:
            continue
        starts, pos = [], 0
        for src in spec.get(key) or []:
            at = text.find(src, pos) if src else -1
            if at < 0:
                starts.append(0)
                continue
            starts.append(text.count("\n", 0, at) + 1)
            pos = at + len(src)
        layout[fname] = starts
    return layout


def _child_build(msg):
    """In the forked child: build, write result.json, exit."""
    out_dir = msg["dir"]
    # Stays in the worker's process group: when the supervisor kills an overrunning worker's
    # group, the compiler dies with it.
    log = os.open(os.path.join(out_dir, "build.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    result = {"ok": False}
    facts = {}  # what a cached-bindings build did (_with_cached_bindings)
    # Confined before the compiler sees any candidate source: only the build folder and a
    # private temp folder are writable, no network.
    sandbox.private_temp(msg["tmp"])
    try:
        state = sandbox.enter([out_dir, msg["tmp"], "/dev/null"], BUILD_FILE_BYTES,
                              BUILD_CPU_SECONDS)
    except sandbox.SandboxError as e:
        with open(os.path.join(out_dir, "result.json"), "w") as f:
            json.dump({"ok": False, "infra": True, "message": str(e)}, f)
        os._exit(1)
    try:
        if msg["op"] == "build_native":
            mod = _ce.load(name=msg["name"], sources=msg["sources"],
                           extra_cflags=msg.get("extra_cflags", []),
                           extra_include_paths=msg.get("extra_include_paths", []),
                           build_directory=out_dir, with_cuda=msg.get("with_cuda", False),
                           verbose=False)
        else:
            spec = msg["spec"]
            # Copies: load_inline inserts its own includes and bindings into the lists it is
            # given, and the layout below must see the candidate's sources alone.
            kwargs = {k: copy.deepcopy(spec[k]) for k in ("cpp_sources", "cuda_sources", "functions",
                                            "extra_cflags", "extra_cuda_cflags", "extra_ldflags",
                                            "extra_include_paths", "with_cuda",
                                            "with_pytorch_error_handling")
                      if k in spec and spec[k] is not None}
            if not kwargs.get("cuda_sources"):
                kwargs.pop("cuda_sources", None)
            if "cpp_sources" not in kwargs:
                kwargs["cpp_sources"] = []
            if msg.get("cached_bindings"):
                mod = _with_cached_bindings(msg, kwargs, facts)
            else:
                mod = _ce.load_inline(name=spec["name"], build_directory=out_dir, verbose=False,
                                      **kwargs)
        result = {"ok": True, "so_file": os.path.basename(mod.__file__),
                  "module_name": mod.__name__}
    except BaseException as e:  # the candidate's error or the machine's: the C++ side decides
        result = {"ok": False, "message": str(e)[-60000:],
                  "exception": type(e).__name__,
                  "traceback": traceback.format_exc()[-4000:]}
    texts = facts.pop("_texts", None)
    result.update(facts)
    if msg["op"] == "build":
        result["layout"] = _source_layout(out_dir, msg["spec"], texts)
    result["sandbox"] = state
    with open(os.path.join(out_dir, "result.json"), "w") as f:
        json.dump(result, f)
    sys.stdout.flush()
    os._exit(0 if result["ok"] else 1)


def _with_cached_bindings(msg, kwargs, facts):
    """load_inline's build with main.cpp in two units, the bindings' object taken from the
    build cache when it holds one for them (bindings.py); load_inline's own when the plan
    refuses. In the build's child; `facts` gets what was done."""
    spec, out_dir = msg["spec"], msg["dir"]
    captured = {}
    real_jit = _ce._jit_compile

    def capture(*args, **kw):
        captured.update(inspect.signature(real_jit).bind(*args, **kw).arguments)
    _ce._jit_compile = capture
    try:  # writes main.cpp (and cuda.cu) as load_inline does, compiles nothing
        _ce.load_inline(name=spec["name"], build_directory=out_dir, verbose=False, **kwargs)
    finally:
        _ce._jit_compile = real_jit
    main_path = captured["sources"][0]
    with open(main_path) as f:
        main_text = f.read()
    facts["_texts"] = {"main.cpp": main_text}
    state, host, detail = bindings.plan(main_text, spec.get("functions"),
                                        spec.get("with_pytorch_error_handling", True),
                                        msg.get("dropped_macros") or ())
    if state != "split":
        facts.update(bindings="refused", bindings_why=detail)
        return real_jit(**captured)
    key = bindings.key(detail, spec, msg.get("bindings_toolchain"))
    entry = os.path.join(msg.get("bindings_dir") or "", key)
    cached = bool(msg.get("bindings_dir")) and os.path.isfile(os.path.join(entry, "bindings.o"))
    meta = {}
    if cached:
        try:
            with open(os.path.join(entry, "meta.json")) as f:
                meta = json.load(f)
        except (OSError, ValueError):
            meta = {}
    with open(main_path, "w") as f:
        f.write(host)
    args = dict(captured)
    if cached:
        obj = os.path.join(entry, "bindings.o")
        kept_name = meta.get("name") or spec["name"]
        if kept_name != spec["name"]:
            # Compiled for another extension: the same object with this one's module init.
            objcopy = shutil.which("objcopy")
            if objcopy is None:
                raise RuntimeError("kforge: no objcopy to rename the cached bindings' module init")
            renamed = os.path.join(out_dir, "kforge_bindings_linked.o")
            r = subprocess.run([objcopy] + bindings.renamed_init(kept_name, spec["name"]) +
                               [obj, renamed], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError("kforge: objcopy failed on the cached bindings: " + r.stderr)
            obj = renamed
        args["extra_ldflags"] = list(args.get("extra_ldflags") or []) + [obj]
    else:
        path = os.path.join(out_dir, bindings.BINDINGS_FILE)
        with open(path, "w") as f:
            f.write(detail)
        args["sources"] = list(args["sources"]) + [path]
    facts.update(bindings="cached" if cached else "built", bindings_key=key)
    mod = real_jit(**args)
    # Linked with an object compiled with other flags (the extension's name aside): not the
    # build asked for.
    if cached and not bindings.same_flags(meta.get("flags"), bindings.ninja_flags(out_dir)):
        raise RuntimeError("kforge: the cached bindings %s were compiled with other flags" % key)
    # Python found the module by this extension's init; pybind11 named it after the one the
    # kept object was compiled for.
    return named(mod, spec["name"])


def _wait(chan, pid, tick=None):
    """Waits for the build child; returns its wait status and the CPU seconds it and its reaped
    descendants (ninja, the compilers) used. If the supervisor goes away meanwhile (killed,
    crashed), the compile is abandoned: the child, its compilers and this worker end together."""
    while True:
        got, status, usage = os.wait4(pid, os.WNOHANG)
        if got == pid:
            return status, usage.ru_utime + usage.ru_stime
        if tick:
            tick()
        readable, _, _ = select.select([chan.sock], [], [], 0.25)
        if readable:
            try:
                data = chan.sock.recv(1, socket.MSG_PEEK)
            except OSError:
                data = b""
            if not data:
                os.killpg(0, signal.SIGKILL)


def _uses_cuda(msg):
    """Whether the build compiles CUDA or links CUDA's libraries (load_inline's own default)."""
    if msg["op"] == "build_native":
        return bool(msg.get("with_cuda"))
    spec = msg.get("spec") or {}
    if spec.get("with_cuda") is not None:
        return bool(spec["with_cuda"])
    return bool(spec.get("cuda_sources"))


def build(chan, msg):
    global _ce
    if _ce is None:
        import torch.utils.cpp_extension as ce  # imported once, inherited by every child
        _ce = ce
    if msg.get("arch"):  # the arch list `hello` found, so every worker compiles the same
        os.environ["TORCH_CUDA_ARCH_LIST"] = msg["arch"]
    pch.configure(msg.get("pch_dir") or "", msg.get("pch_make", False))
    os.makedirs(msg["dir"], exist_ok=True)
    if msg["op"] == "build" and msg.get("split_build"):
        return _split_or_usual(chan, msg)
    return _usual(chan, msg)


def _split_or_usual(chan, msg):
    """A split build (split_build.py) when the plan can be made and builds; otherwise the usual
    build (light headers first when asked), its result saying why the split was not used."""
    state, split_spec, info = split_build.plan(
        msg["spec"], cuda_path=os.path.join(msg["dir"], "cuda.cu"), nvcc_defines=_nvcc_defines())
    split_cpu_s = 0.0
    if state == "split":
        shadow = os.path.join(msg["dir"], SPLIT_SHADOW)
        os.makedirs(os.path.join(shadow, "torch"), exist_ok=True)
        with open(os.path.join(shadow, "torch", "types.h"), "w") as f:
            f.write(split_build.SHADOW_HEADER)
        split_spec["extra_cuda_cflags"] = ["-I" + shadow] + list(
            split_spec.get("extra_cuda_cflags") or [])
        split = _attempt_bindings(chan, dict(msg, spec=split_spec), facts=False)
        undefined = _undefined_stubs(msg["dir"], split) if split.get("ok") else []
        if undefined:  # torch links without --no-undefined: the import would fail, not the build
            split = dict(split, ok=False, message="error: the split build left launch stubs "
                         "undefined: " + ", ".join(undefined[:3]))
        if split.get("ok"):
            # The split's cuda.cu holds one string where load_inline put the candidate's, each
            # line in place: the candidate's strings start where they would have.
            layout = dict(split.get("layout") or {})
            first = (layout.get("cuda.cu") or [0])[0]
            layout["cuda.cu"] = split_build.source_starts(msg["spec"], first)
            split["layout"] = layout
            split.update(split_build="used", split_build_cpu_s=split["cpu_s"],
                         split_build_kernels=info)
            return split
        if split.get("infra"):  # the sandbox failed: the next attempt would too
            return split
        split_cpu_s = split["cpu_s"]
        info = "the split build failed: " + _first_error(split.get("message", ""))
        _keep_log(msg["dir"], "split-attempt.log")
    # After a failed split, no light attempt: it drops torch/extension.h as the split does, and
    # failed after it in 44 of the corpus's 48 such builds (an H100, 2026-12-07), a third
    # compile before the one as written that decides.
    result = _usual(chan, msg, light=state != "split")
    result["cpu_s"] += split_cpu_s
    result.update(split_build="fell_back" if state == "split" else "refused",
                  split_build_why=info, split_build_cpu_s=split_cpu_s)
    return result


def _undefined_stubs(build_dir, result):
    """The launch stubs a split build's extension needs and does not define (`nm -D`): a
    template stub instantiation the plan missed. Unreadable counts as all missing."""
    so = os.path.join(build_dir, result.get("so_file", ""))
    try:
        r = subprocess.run(["nm", "-D", "--undefined-only", so], capture_output=True, text=True,
                           timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return ["(nm failed: %s)" % e]
    if r.returncode != 0:
        return ["(nm failed: %s)" % r.stderr.strip()[:200]]
    return [line.split()[-1] for line in r.stdout.splitlines() if split_build.STUB_PREFIX in line]


# The split build's stand-in for torch/types.h lives here, inside the build folder (readable in
# the build's sandbox), found first through an -I on nvcc's command line only.
SPLIT_SHADOW = "kforge-split"


def _nvcc_defines():
    """The macros torch's builder defines on nvcc's command line only (its COMMON_NVCC_FLAGS):
    a split build's host code is compiled with them, as nvcc compiled it."""
    return [f[2:] for f in getattr(_ce, "COMMON_NVCC_FLAGS", []) if f.startswith("-D")]


def _usual(chan, msg, light=True):
    """The build as load_inline makes it, with light headers first when asked and `light` (False:
    a split build of the same sources failed, and the light attempt is left out)."""
    if msg["op"] != "build" or not msg.get("light_headers"):
        return _attempt_bindings(chan, msg)
    # Light headers (light_headers.py): first the CUDA sources without torch/extension.h, then,
    # on any failure, again exactly as written. Each attempt runs in its own forked child, as
    # one build would: torch names the module by the name alone only in a fresh process.
    state, light_spec, why = light_headers.plan(msg["spec"], lambda: _dropped_macros(msg))
    if state == "rewrite" and not light:
        result = _attempt_bindings(chan, msg)
        result.update(light_headers="fell_back", light_headers_cpu_s=0.0,
                      light_headers_why="not tried: the split build failed, and a light build "
                      "leaves out torch/extension.h as it does")
        return result
    if state == "rewrite":
        light = _attempt_bindings(chan, dict(msg, spec=light_spec), facts=False)
        light_cpu_s = light["cpu_s"]
        if light.get("ok"):
            light.update(light_headers="used", light_headers_cpu_s=light_cpu_s)
            return light
        if light.get("infra"):  # the sandbox failed: the second attempt would too
            return light
        why = "the light build failed: " + _first_error(light.get("message", ""))
        _keep_log(msg["dir"])
        result = _attempt_bindings(chan, msg)
        result["cpu_s"] += light_cpu_s
        result["light_headers_cpu_s"] = light_cpu_s
        state = "fell_back"
    else:
        result = _attempt_bindings(chan, msg)
        state = "fell_back" if state == "as_written" else "unchanged"
    result.update(light_headers=state, light_headers_why=why)
    return result


def _dropped_macros(msg):
    """The macros only torch/extension.h defines, for the host compiler torch's builder runs
    with the include folders and defines it passes (cached under msg["light_dir"])."""
    flags = ["-std=c++17", "-DTORCH_API_INCLUDE_EXTENSION_H"]
    # torch's own folders (pybind11 is among them) and Python's: what both headers read.
    for d in _ce.include_paths() + [sysconfig.get_paths()["include"]]:
        flags += ["-isystem", d]
    compiler = pch.real_cxx()
    return light_headers.dropped_macros(shutil.which(compiler) or compiler, flags,
                                        msg.get("light_dir") or "")


def _first_error(message):
    lines = message.splitlines()
    for mark in ("error:", "error"):
        for line in lines:
            if mark in line:
                return line.strip()[:300]
    return message.strip().splitlines()[-1][:300] if message.strip() else "(no message)"


def _keep_log(build_dir, name="light-attempt.log"):
    """Empties the build folder for the next attempt, keeping the failed attempt's log as `name`
    (light-attempt.log, split-attempt.log: why it fell back) and the logs kept before it."""
    log = os.path.join(build_dir, "build.log")
    try:
        with open(log, errors="replace") as f:
            text = f.read()[-20000:]
    except OSError:
        text = ""
    for entry in os.listdir(build_dir):
        path = os.path.join(build_dir, entry)
        if entry.endswith("-attempt.log"):
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    with open(os.path.join(build_dir, name), "w") as f:
        f.write(text)


def _attempt_bindings(chan, msg, facts=True):
    """_attempt, with cached bindings (bindings.py) when asked: a split that fails to build is
    built again as load_inline would (its log kept as bindings-attempt.log); a bindings' object
    compiled for the first time is kept in the build cache for the next candidate."""
    if msg["op"] != "build" or not msg.get("cached_bindings") or not msg.get("bindings_dir"):
        return _attempt(chan, dict(msg, cached_bindings=False), facts)
    msg = dict(msg, dropped_macros=sorted(_dropped_macros(msg)),
               bindings_toolchain=_bindings_toolchain())
    result = _attempt(chan, msg, facts=False)
    state = result.get("bindings")
    if result.get("ok"):
        if state == "built":
            _keep_bindings(msg["dir"], msg["bindings_dir"], result["bindings_key"],
                           msg["spec"]["name"])
        if state in ("built", "cached"):  # a refused plan was load_inline's own build
            result["bindings_cpu_s"] = result["cpu_s"]
        return result
    if state not in ("built", "cached") or result.get("infra"):
        if facts and not result.get("infra"):  # refused: this was load_inline's own build
            result["toolchain"] = toolchain.facts(msg.get("probe"), _uses_cuda(msg), _ce)
        return result
    if state == "cached":  # it may be the object that failed: the next build compiles it again
        shutil.rmtree(os.path.join(msg["bindings_dir"], result["bindings_key"]), ignore_errors=True)
    why = "the cached-bindings build failed: " + _first_error(result.get("message", ""))
    _keep_log(msg["dir"], "bindings-attempt.log")
    again = _attempt(chan, dict(msg, cached_bindings=False), facts)
    again["cpu_s"] += result["cpu_s"]
    again.update(bindings="fell_back", bindings_why=why, bindings_cpu_s=result["cpu_s"])
    return again


MAX_BINDINGS = 256  # kept bindings' objects (a few MB each); the oldest go first


def _keep_bindings(build_dir, root, key, name):
    """Publishes the bindings' object a build compiled (outside the candidate's sandbox, with
    the flags torch's builder used and the extension's name its module init has) under
    `root`/`key`, in one rename."""
    obj = os.path.join(build_dir, os.path.splitext(bindings.BINDINGS_FILE)[0] + ".o")
    flags = bindings.ninja_flags(build_dir)
    if not os.path.isfile(obj) or flags is None:
        return
    try:
        os.makedirs(root, exist_ok=True)
        entries = sorted((os.path.getmtime(os.path.join(root, e)), e) for e in os.listdir(root)
                         if not e.endswith(".tmp"))
        for _, old in entries[:max(0, len(entries) - MAX_BINDINGS + 1)]:
            shutil.rmtree(os.path.join(root, old), ignore_errors=True)
        tmp = os.path.join(root, "%s.%d.tmp" % (key, os.getpid()))
        os.makedirs(tmp, exist_ok=True)
        shutil.copyfile(obj, os.path.join(tmp, "bindings.o"))
        with open(os.path.join(tmp, "meta.json"), "w") as f:
            json.dump({"flags": flags, "name": name}, f)
        try:
            os.rename(tmp, os.path.join(root, key))
        except OSError:  # another build kept the same bindings first
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError:
        pass


_toolchain_facts = None


def _bindings_toolchain():
    """What a bindings' object depends on besides its text and flags: the real compiler, torch
    (version and headers) and Python."""
    global _toolchain_facts
    if _toolchain_facts is None:
        stat = light_headers.file_identity
        cxx = pch.real_cxx()
        header = os.path.join(_ce.include_paths()[0], "torch", "extension.h")
        _toolchain_facts = {"cxx": stat(shutil.which(cxx) or cxx), "extension_h": stat(header),
                            "torch": _torch_version_info(), "python": sys.version}
    return _toolchain_facts


def _attempt(chan, msg, facts=True):
    """One build in a forked, sandboxed child; its result (result.json) with the CPU seconds it
    and its compilers used. `facts`: a failure reports the toolchain (not needed for a light
    attempt, which is built again as written)."""
    msg = dict(msg, tmp=tempfile.mkdtemp(prefix="kforge-build-"))
    pid = os.fork()
    if pid == 0:
        try:
            _child_build(msg)
        finally:
            os._exit(3)
    status, cpu_s = _wait(chan, pid, lambda: pch.during_build(msg["dir"], msg.get("pch_make", False)))
    shutil.rmtree(msg["tmp"], ignore_errors=True)
    pch_state = pch.after_build(msg["dir"], msg.get("pch_make", False))
    try:
        with open(os.path.join(msg["dir"], "result.json")) as f:
            result = json.load(f)
    except (OSError, ValueError):
        log = ""
        try:
            with open(os.path.join(msg["dir"], "build.log"), errors="replace") as f:
                log = f.read()[-8000:]
        except OSError:
            pass
        result = {"ok": False, "message": "the build process died (wait status %d)\n%s" % (status, log)}
    result["cpu_s"] = cpu_s
    if facts and not result.get("ok") and not result.get("infra"):
        # What the build had to work with, looked up where it looked (outside the sandbox, after
        # it): the C++ side blames the machine only when a part it needs is really missing.
        result["toolchain"] = toolchain.facts(msg.get("probe"), _uses_cuda(msg), _ce)
    if pch_state:
        result["pch"] = pch_state
    return result


# Compilers yield to the lanes: a candidate being timed while every core compiles would see its
# host side (launches, the input rewrite) delayed, its wall clock stretched past its kernels'
# time, and the H07 bound mistake that for hidden work. Builds still use every idle core.
BUILD_NICE = 10


def main():
    fd = int(sys.argv[sys.argv.index("--fd") + 1])
    chan = Channel(fd)
    try:
        os.nice(BUILD_NICE)
    except OSError:
        pass
    try:
        _serve(chan)
    finally:
        pch.stop()


def _serve(chan):
    while True:
        try:
            msg = chan.recv()
        except EOFError:
            return
        op = msg.get("op")
        if op == "exit":
            return
        why = protocol.check_request("build_worker", msg)
        if why is not None:
            chan.send(protocol.error_reply("build_worker", why))
            continue
        chan.send(protocol.checked("build_worker", op, HANDLERS[op](chan, msg)))


# op -> handler(chan, msg) -> reply; `exit` ends the loop. runner/protocol.json lists the same
# ops (tests/runner/test_protocol.py).
HANDLERS = {
    "hello": lambda chan, msg: hello(msg),
    "build": build,
    "build_native": build,
}


if __name__ == "__main__":
    main()
