"""Light headers: compile a candidate's cuda.cu without torch/extension.h when it does not need it.

load_inline writes cuda.cu as `#include <torch/types.h>`, `<cuda.h>`, `<cuda_runtime.h>`, then
the candidate's CUDA sources, which almost always start with `#include <torch/extension.h>`.
That header adds all of libtorch's C++ API (nn, optim, data, jit, serialize, autograd) and
pybind11 to what torch/types.h already gives, and nvcc parses it three times (cudafe++, cicc,
the host compiler): on the H200 it is about half of nvcc's CPU time. The bindings that need
pybind11 live in main.cpp, which keeps its include (and its precompiled header).

So, when asked (build_worker: msg["light_headers"]), the worker first builds with the candidate's
first `#include <torch/extension.h>` replaced, on the same line, by `#include <torch/types.h>`
(LIGHT_LINE). Line numbers do not move, so `__LINE__` in device asserts and TORCH_CHECK messages
and every compiler message stay where they were. If that build fails for any reason, or the
candidate's preprocessor conditionals test a macro that only torch/extension.h defines (the
cheap check we can make for a build that would compile and mean something else), the worker
builds again exactly as written.

Standard library only, and no torch import: the plan is made in the worker before the fork.
"""
import fcntl
import hashlib
import json
import os
import re
import subprocess

LIGHT_LINE = "#include <torch/types.h>"
# Part of every light build's artifact key (the C++ side sends it as light_headers): a change of
# LIGHT_LINE or of the rules here must change VERSION so old light artifacts are not reused.
VERSION = 1

_INCLUDE = re.compile(r'[ \t]*#[ \t]*include[ \t]*(<torch/extension\.h>|"torch/extension\.h")')
_CONDITIONAL = re.compile(r"[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef)\b(.*)")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RAW = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s"]{0,16})\(')


def _code_mask(text):
    """For each character of C/C++ `text`: True when it is code, False inside a comment, a
    string or character literal (raw strings included)."""
    mask = [True] * len(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        after_word = i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")
        raw = _RAW.match(text, i) if c in "uULR" and not after_word else None
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif raw:
            delim = ")" + raw.group(1) + '"'
            j = text.find(delim, raw.end())
            j = n if j < 0 else j + len(delim)
        elif c == '"' or (c == "'" and not after_word):  # 1'000: a digit separator
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            mask[k] = False
        i = j
    return mask


def _directive_lines(text):
    """(start, end) of every line of `text` that can hold a directive: its first non-blank
    character is code (not in a comment or string carried over from an earlier line) and it
    does not continue the line before (a backslash splice). A directive split over lines is
    then not matched, and nothing is rewritten."""
    mask = _code_mask(text)
    pos = 0
    spliced = False
    for line in text.split("\n"):
        end = pos + len(line)
        first = len(line) - len(line.lstrip(" \t"))
        if not spliced and first < len(line) and mask[pos + first]:
            yield pos, end
        spliced = line.endswith("\\")
        pos = end + 1


def rewrite(sources):
    """`sources` (the candidate's CUDA source strings, in order) with the first real
    `#include <torch/extension.h>` replaced by LIGHT_LINE, or None when there is none. Later
    includes of it, and mentions in comments and strings, are left alone."""
    for si, text in enumerate(sources):
        for start, end in _directive_lines(text):
            m = _INCLUDE.match(text, start, end)
            if not m:
                continue
            indent = text[start:m.start(1)]
            indent = indent[:len(indent) - len(indent.lstrip(" \t"))]
            out = list(sources)
            out[si] = text[:start] + indent + LIGHT_LINE + text[m.end():]
            return out
    return None


def tested_macros(sources):
    """The identifiers the preprocessor conditionals of `sources` look at (#if, #ifdef, ...,
    defined(X)), in comments and strings excluded."""
    names = set()
    for text in sources:
        for start, end in _directive_lines(text):
            m = _CONDITIONAL.match(text, start, end)
            if m:
                cond = re.sub(r"//.*|/\*.*?\*/", " ", m.group(2))
                names.update(_IDENT.findall(cond))
    return names - {"defined", "__has_include", "__has_include_next"}


def plan(spec, dropped_macros):
    """What a light build of `spec` (the build request's spec) should do:
    ("rewrite", spec with the rewritten CUDA sources, None),
    ("as_written", None, why) when there is an include to rewrite but it must not be, or
    ("unchanged", None, why) when there is nothing to rewrite.
    `dropped_macros()`: the macros torch/extension.h defines beyond torch/types.h (a set), or
    None when they could not be found out (then nothing is rewritten); asked only when there is
    an include to rewrite."""
    sources = spec.get("cuda_sources") or []
    if isinstance(sources, str):
        sources = [sources]
    light = rewrite(sources)
    if light is None:
        return "unchanged", None, "no #include <torch/extension.h> in the CUDA sources"
    dropped = dropped_macros()
    if dropped is None:
        return "as_written", None, "the macros of torch/extension.h could not be listed"
    tested = sorted(tested_macros(sources) & dropped)
    if tested:
        return "as_written", None, "the CUDA sources test %s, which torch/extension.h defines" % (
            ", ".join(tested[:5]))
    out = dict(spec)
    out["cuda_sources"] = light
    return "rewrite", out, None


# --- the macros torch/extension.h adds, found once per toolchain ----------------------------

def _defines(compiler, flags, header):
    try:
        r = subprocess.run([compiler, "-x", "c++", "-E", "-dM"] + flags + ["-"],
                           input="#include <%s>\n" % header, capture_output=True, text=True,
                           timeout=300)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    out = {}
    for line in r.stdout.splitlines():
        m = re.match(r"#define ([A-Za-z_][A-Za-z0-9_]*)(\(.*?\))?\s*(.*)", line)
        if m:
            out[m.group(1)] = (m.group(2) or "") + m.group(3)
    return out


def dropped_macros(compiler, flags, cache_dir):
    """The macros the host compiler sees defined (or defined otherwise) after
    `#include <torch/extension.h>` but not after `#include <torch/types.h>`, with `flags` (the
    include folders and defines torch's builder uses); cached in `cache_dir` per compiler and
    flags (a file lock: concurrent workers find them out once). None when either header does
    not preprocess."""
    key = hashlib.sha256(json.dumps([file_identity(compiler), flags, VERSION]).encode()).hexdigest()[:32]
    if not cache_dir:
        return _find_dropped(compiler, flags)
    path = os.path.join(cache_dir, "macros-%s.json" % key)
    os.makedirs(cache_dir, exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(path) as f:
                return set(json.load(f))
        except (OSError, ValueError):
            pass
        dropped = _find_dropped(compiler, flags)
        if dropped is not None:  # a failure is not kept: a fixed toolchain is tried again
            tmp = "%s.%d" % (path, os.getpid())
            with open(tmp, "w") as f:
                json.dump(sorted(dropped), f)
            os.rename(tmp, path)
        return dropped


def _find_dropped(compiler, flags):
    full = _defines(compiler, flags, "torch/extension.h")
    light = _defines(compiler, flags, "torch/types.h")
    if full is None or light is None:
        return None
    return {k for k, v in full.items() if light.get(k) != v}


def file_identity(path):
    """A file's real path, size and modification time (None when it cannot be read): what a
    cache key holds for a compiler or a header, so an upgrade in place changes the key."""
    try:
        s = os.stat(path)
        return [os.path.realpath(path), s.st_size, s.st_mtime_ns]
    except OSError:
        return None
