"""A precompiled torch/extension.h for load_inline's main.cpp (and torch/types.h for the host
half of a cached-bindings build, whose main.cpp starts with that instead: bindings.py).

Most of a C++ extension's compile time is GCC parsing torch's headers, and every load_inline
build's main.cpp starts with `#include <torch/extension.h>`. So the build worker points torch's
builder (through CXX) at a small wrapper script that runs this file as `pch.py cxx ARGS...`:

- For the compile of a main.cpp it computes a key from the real compiler and the command line
  with the per-extension parts left out (-DTORCH_EXTENSION_NAME, the file names, -MMD/-MF). When
  `<root>/<key>/torch/extension.h.gch` exists, it adds `-I<root>/<key>`: GCC then finds the .gch
  beside a symlink to the real header and reads the parsed headers from it instead of parsing
  them again. The object file is the same bytes either way, and GCC itself falls back to the
  real header whenever the .gch does not match the command line (options, macros).
- Otherwise it runs the compiler unchanged and leaves a note (`kforge-pch-want.json`) in the
  build folder; after the build, the worker starts `pch.py make ...`, which builds that PCH once
  (a file lock keeps concurrent workers and kforge processes from building it twice) outside the
  candidate's sandbox, and publishes it with one rename. Later builds with the same flags use it.
  So do the builds running meanwhile that also compile a cuda.cu: their main.cpp compile waits
  for the PCH being made, which costs no time (nvcc takes longer) and saves 9 CPU-seconds each.

Every other invocation (linking, version queries) runs the compiler unchanged. This file uses the
standard library only: it starts for every compiler call, without torch.
"""
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

WANT_FILE = "kforge-pch-want.json"  # torch/extension.h's note; other headers' are named apart
# Each is 0.3-0.7 GB (torch/types.h's less); candidates almost all share one or two flag sets,
# and a cached-bindings build uses two headers' PCHs per set.
MAX_PCHS = 6
# The longest a main.cpp compile waits for its PCH to be made: 27 s on an idle H200 host,
# 36.5 s under a full load of builds; nvcc on cuda.cu takes longer still.
WAIT_S = 75
# The headers a PCH is made of: what a main.cpp's first line includes (load_inline's, or the
# host half of a cached-bindings build's).
_HEADERS = (os.path.join("torch", "extension.h"), os.path.join("torch", "types.h"))


def want_file(rel):
    """The note a compile of a unit starting with header `rel` leaves in its build folder: one
    per header, since a cached-bindings build compiles one unit of each."""
    if rel == _HEADERS[0]:
        return WANT_FILE
    return "kforge-pch-want-%s.json" % os.path.splitext(os.path.basename(rel))[0]
_original_cxx = None


def _compile_of_main(args):
    """For torch's `$cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags` on a main.cpp:
    the flags that decide what the headers mean (the key's and the PCH build's); else None."""
    if "-c" not in args:
        return None
    flags, sources, i = [], [], 0
    while i < len(args):
        a = args[i]
        if a in ("-o", "-MF", "-MT", "-MQ"):
            i += 2
            continue
        if a in ("-c", "-MMD", "-MD") or a.startswith("-DTORCH_EXTENSION_NAME="):
            i += 1
            continue
        if a in ("-isystem", "-I", "-include", "-x", "-D", "-U", "-iquote", "-idirafter"):
            flags += args[i:i + 2]
            i += 2
            continue
        if a.startswith("-"):
            flags.append(a)
        else:
            sources.append(a)
        i += 1
    if len(sources) != 1 or os.path.basename(sources[0]) not in _UNITS:
        return None
    if any(f in ("-x", "-include") for f in flags):
        return None  # the include would not be the file's first token any more
    return flags


# The files whose first line is load_inline's `#include <torch/extension.h>`: main.cpp, and a
# cached-bindings build's bindings (bindings.py).
_UNITS = ("main.cpp", "kforge_bindings.cpp")


def _unit_source(args):
    """The main.cpp or bindings' file a compile command line names."""
    return next((a for a in args if os.path.basename(a) in _UNITS), "")


def _first_header(path):
    """Which of _HEADERS the file's first line includes (relative to the include folder), or
    None."""
    try:
        with open(path, errors="replace") as f:
            line = f.readline().strip()
    except OSError:
        return None
    for rel in _HEADERS:
        if line == "#include <%s>" % rel.replace(os.sep, "/"):
            return rel
    return None


def _torch_header(flags, rel):
    for i, a in enumerate(flags):
        d = flags[i + 1] if a in ("-isystem", "-I") and i + 1 < len(flags) else None
        if d is None and a.startswith("-I") and len(a) > 2:
            d = a[2:]
        if d and os.path.isfile(os.path.join(d, rel)):
            return os.path.join(d, rel)
    return None


def _header_rel(header):
    """The one of _HEADERS an absolute header path is, or None."""
    real = os.path.realpath(header)
    return next((rel for rel in _HEADERS if real.endswith(os.sep + rel)), None)


def _key(compiler, flags, header):
    def stat(p):
        s = os.stat(p)
        return [os.path.realpath(p), s.st_size, s.st_mtime_ns]
    # The torch headers are keyed through torch's generated version file beside them as well as
    # extension.h itself: an upgrade in place changes both.
    version = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(header))), "version.py")
    parts = [stat(compiler), flags, stat(header),
             stat(version) if os.path.exists(version) else None]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def cxx(argv):
    real = os.environ.get("KFORGE_REAL_CXX", "c++")
    root = os.environ.get("KFORGE_PCH_DIR", "")
    flags = _compile_of_main(argv) if root else None
    rel = _first_header(_unit_source(argv)) if flags is not None else None
    header = _torch_header(flags, rel) if rel is not None else None
    if header:
        try:
            key = _key(shutil.which(real) or real, flags, header)
        except OSError:
            key = None
        if key:
            d = os.path.join(root, key)
            use = os.path.isfile(os.path.join(d, rel + ".gch"))
            note = {"key": key, "used": use, "compiler": real, "flags": flags, "header": header}
            _note(rel, note)
            if not use and _worth_waiting(root, key):
                use = _wait_for(root, key, rel)
                if use:
                    _note(rel, dict(note, used=True, waited=True))
            if use:
                os.execvp(real, [real, "-I" + d] + argv)
    os.execvp(real, [real] + argv)


def _note(rel, want):
    try:  # the build folder is ninja's working directory and writable in the sandbox
        with open(want_file(rel), "w") as f:
            json.dump(want, f)
    except OSError:
        pass


def _worth_waiting(root, key):
    """Whether this main.cpp should wait for its PCH, which the worker starts as soon as it
    reads the note: only where the worker makes PCHs at all (KFORGE_PCH_WAIT_S), no attempt at
    this one failed, and the build also compiles a cuda.cu. nvcc on it takes longer than making
    the PCH, so the wait costs the build no time, and main.cpp then costs less than half the
    CPU."""
    return _wait_limit() > 0 and os.path.isfile("cuda.cu") and _may_make(root, key)


def _wait_limit():
    return float(os.environ.get("KFORGE_PCH_WAIT_S") or 0)


def _may_make(root, key):
    """Whether the PCH for `key` can still be made: it does not exist, no attempt at it failed,
    and `root` holds fewer than MAX_PCHS."""
    try:
        have = [n for n in os.listdir(root) if len(n) == 32]
    except OSError:
        have = []
    return (key not in have and len(have) < MAX_PCHS and
            not os.path.exists(os.path.join(root, key + ".failed")))


def _held(lock_path):
    """Whether a `make` process holds the PCH's lock now."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False  # no locks here (a filesystem without them): never wait
    finally:
        os.close(fd)


def _wait_for(root, key, rel, start_s=2.0):
    """Waits while the PCH of header `rel` is being made: up to `start_s` for a maker to take
    its lock, then until it lets go or KFORGE_PCH_WAIT_S has passed. True when it exists."""
    gch = os.path.join(root, key, rel + ".gch")
    lock = os.path.join(root, key + ".lock")
    limit = _wait_limit()
    t0 = time.monotonic()
    seen = False
    while not os.path.isfile(gch):
        waited = time.monotonic() - t0
        if _held(lock):
            seen = True
        elif seen or waited > start_s:
            break  # made (published before the lock is let go), failed, or never started
        if waited > limit:
            break
        time.sleep(0.1)
    return os.path.isfile(gch)


# The flag shapes a PCH may be made with. The note comes from the candidate's sandbox and the
# PCH is made outside it, so anything that could run a program or write elsewhere (-wrapper,
# -B, -fplugin, -specs, @file, -Wl,...) means no PCH, not a compile.
_SAFE_FLAG = re.compile(
    r"-[DU][A-Za-z_][A-Za-z0-9_]*(=[^\s]*)?|-I[^\s]+|-std=[\w+]+|-O[0-3sgz]?|-fPIC|-fpic|"
    r"-fopenmp|-ffast-math|-fno-[a-z][\w-]*|-W(?![lap],)[a-z][\w=-]*|-w|-g[0-3]?|-pthread|"
    r"-march=[\w-]+|-mtune=[\w-]+|-fvisibility=\w+|-fdiagnostics-color(=\w+)?")


def trusted_want(want):
    """`want` (read from a note a sandboxed build wrote) when it asks for nothing but a PCH of
    torch's header by the real compiler with safe flags; else None."""
    try:
        key, compiler, flags, header = want["key"], want["compiler"], want["flags"], want["header"]
    except (KeyError, TypeError):
        return None
    if not (isinstance(key, str) and re.fullmatch(r"[0-9a-f]{16,64}", key)):
        return None
    real = shutil.which(real_cxx())
    if not isinstance(compiler, str) or not real or \
            os.path.realpath(shutil.which(compiler) or compiler) != os.path.realpath(real):
        return None
    if not (isinstance(header, str) and os.path.isfile(header) and _header_rel(header)):
        return None
    if not isinstance(flags, list):
        return None
    i = 0
    while i < len(flags):
        f = flags[i]
        if f == "-isystem" and i + 1 < len(flags) and isinstance(flags[i + 1], str) and \
                not flags[i + 1].startswith("-"):
            i += 2
            continue
        if not isinstance(f, str) or not _SAFE_FLAG.fullmatch(f):
            return None
        i += 1
    return dict(want, compiler=real)


_SLOTS = "make.lock"  # held while a maker counts the PCHs and takes a slot


def _in_use(root, key):
    """How many PCHs `root` holds or is making, other than `key`'s: the finished ones, and
    those whose maker holds their lock now (a maker killed half-way holds none)."""
    try:
        names = os.listdir(root)
    except OSError:
        return 0
    done = {n for n in names if len(n) == 32 and n != key}
    making = {n[:-5] for n in names if n.endswith(".lock") and len(n) == 37}
    making = {k for k in making - done - {key} if _held(os.path.join(root, k + ".lock"))}
    return len(done) + len(making)


def make(root, want):
    """Builds one PCH (in its own process, started by the worker after a build). At most
    MAX_PCHS exist or are being made at once: concurrent makers (other workers, other kforge
    processes) count and take a slot one at a time, under one lock."""
    want = trusted_want(want)
    if want is None:
        return 1
    key = want["key"]
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, key + ".lock"), "w") as lock:
        with open(os.path.join(root, _SLOTS), "w") as slots:
            fcntl.flock(slots, fcntl.LOCK_EX)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return 0  # another worker is building it
            final = os.path.join(root, key)
            if os.path.exists(final) or os.path.exists(final + ".failed"):
                return 0
            if _in_use(root, key) >= MAX_PCHS:
                return 0
            # The slot is ours from here: this key's lock is held, and the next maker to count
            # sees it. (Before, each worker counted finished PCHs alone before starting its
            # maker, and five concurrent builds on the H200 made five PCHs with a limit of 4.)
        tmp = final + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        rel = _header_rel(want["header"])
        os.makedirs(os.path.join(tmp, "torch"))
        os.symlink(want["header"], os.path.join(tmp, rel))
        cmd = ([want["compiler"]] + want["flags"] +
               ["-x", "c++-header", want["header"], "-o", os.path.join(tmp, rel + ".gch")])
        t0 = time.monotonic()
        r0 = os.times()
        with open(os.path.join(tmp, "build.log"), "w") as log:
            rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
        r1 = os.times()
        info = {"command": cmd, "exit": rc, "wall_s": round(time.monotonic() - t0, 2),
                "cpu_s": round(r1.children_user + r1.children_system
                               - r0.children_user - r0.children_system, 2)}
        with open(os.path.join(tmp, "pch.json"), "w") as f:
            json.dump(info, f, indent=1)
        if rc != 0:  # remembered, so that no later build tries again
            os.rename(tmp, final + ".failed")
            return 1
        os.rename(tmp, final)
    return 0


# --- used by the build worker ---------------------------------------------------------------

def real_cxx():
    """The compiler torch's builder would run without the wrapper: $CXX as it was before
    configure() pointed it at the wrapper, else c++. A PCH maker is started by the worker after
    that, with the wrapper as $CXX: it takes the worker's KFORGE_REAL_CXX (its environment is
    the worker's, never the sandbox's)."""
    return _original_cxx or os.environ.get("KFORGE_REAL_CXX") or os.environ.get("CXX", "c++")


def configure(root, make_missing=False):
    """Points torch's builder at the wrapper (CXX), or back at the real compiler (root "").
    With `make_missing` (this worker makes missing PCHs), a main.cpp compile beside a cuda.cu
    waits for the PCH it asked for, up to WAIT_S."""
    global _original_cxx
    if _original_cxx is None:
        _original_cxx = os.environ.get("CXX", "c++")
    real = shutil.which(_original_cxx)
    os.environ.pop("KFORGE_PCH_WAIT_S", None)
    if not root or not real:
        os.environ["CXX"] = _original_cxx
        os.environ.pop("KFORGE_PCH_DIR", None)
        os.environ.pop("KFORGE_REAL_CXX", None)  # else real_cxx() would still name it
        return
    if make_missing:
        os.environ["KFORGE_PCH_WAIT_S"] = str(WAIT_S)
    # Named like the real compiler: torch recognises GCC or Clang by the name in the path.
    tag = hashlib.sha256((real + sys.executable).encode()).hexdigest()[:12]
    bindir = os.path.join(root, "bin", tag)
    wrapper = os.path.join(bindir, os.path.basename(os.path.realpath(real)))
    text = "#!/bin/sh\nexec '%s' -S -I '%s' cxx \"$@\"\n" % (
        sys.executable, os.path.abspath(__file__))
    try:
        with open(wrapper) as f:
            current = f.read()
    except OSError:
        current = None
    if current != text:
        os.makedirs(bindir, exist_ok=True)
        tmp = "%s.%d" % (wrapper, os.getpid())
        with open(tmp, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o755)
        os.rename(tmp, wrapper)
    os.environ.update({"CXX": wrapper, "KFORGE_REAL_CXX": real, "KFORGE_PCH_DIR": root})


_makers = []
_started = set()  # keys this worker started a PCH build for


def _read_wants(build_dir):
    """The notes the build's compiles left, one per header."""
    wants = []
    for rel in _HEADERS:
        try:
            with open(os.path.join(build_dir, want_file(rel))) as f:
                want = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(want, dict) and isinstance(want.get("key"), str):
            wants.append(want)
    return wants


def _make(want):
    """Starts building `want`'s PCH unless it exists, failed, is over the limit or was started
    here: in the background, in a session of its own, so that it is finished even when this
    worker ends first (stop())."""
    global _makers
    _makers = [p for p in _makers if p.poll() is None]  # reaps finished ones
    root = os.environ.get("KFORGE_PCH_DIR")
    want = trusted_want(want)
    if not root or want is None or want["key"] in _started or not _may_make(root, want["key"]):
        return
    _started.add(want["key"])
    _makers.append(subprocess.Popen(
        [sys.executable, "-S", "-I", os.path.abspath(__file__), "make", root, json.dumps(want)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True))


def during_build(build_dir, make_missing):
    """Called while a build runs: as soon as its main.cpp compile finds no PCH for its flags,
    that PCH starts building, in parallel with the rest of this build."""
    if not make_missing or not os.environ.get("KFORGE_PCH_DIR"):
        return
    for want in _read_wants(build_dir):
        if not want.get("used"):
            _make(want)


def after_build(build_dir, make_missing):
    """What the build in `build_dir` did about PCHs: "used" (every unit that could read one
    did), "missing" (one at least had none) or None (no unit was compiled through the
    wrapper). With `make_missing`, each missing PCH is started."""
    wants = _read_wants(build_dir)
    for rel in _HEADERS:
        try:
            os.unlink(os.path.join(build_dir, want_file(rel)))
        except OSError:
            pass
    if not wants or not os.environ.get("KFORGE_PCH_DIR"):
        return None
    missing = [w for w in wants if not w.get("used")]
    if make_missing:
        for want in missing:
            _make(want)
    return "missing" if missing else "used"


def stop():
    """The worker is exiting: its unfinished PCH builds run on to the end (one compile each, at
    most MAX_PCHS). Ended with the worker, as they were before 2026-12-05, a PCH outlived by
    every short-lived process that started it (`kforge eval` ends a few seconds after its
    build, the PCH takes 40 CPU-s) was never made: each later process started it again and
    killed it, and every build compiled torch's headers in full (the CPU suite's 16 builds:
    none used a PCH, 32-43 CPU-s each)."""
    _makers.clear()


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "cxx":
        cxx(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "make":
        sys.exit(make(sys.argv[2], json.loads(sys.argv[3])))
    else:
        sys.exit("usage: pch.py cxx ARGS... | pch.py make ROOT WANT_JSON")
