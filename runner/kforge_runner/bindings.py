"""Cached bindings: a candidate's main.cpp compiled as two objects, its bindings' one reused.

load_inline's main.cpp is `#include <torch/extension.h>`, the candidate's C++ sources, then the
PYBIND11_MODULE it writes for `functions`. Most of its compile time is torch/extension.h and
the pybind11 code the bindings instantiate, not the candidate's code (this machine: the
bindings alone 20 CPU-s with the precompiled header, the candidate's code on torch/types.h 8),
and the bindings are the same text for every candidate that binds the same functions with the
same signatures: a red team's forty ReLUs, an RL group's samples of one problem.

So, when asked (build_worker: msg["cached_bindings"]), the build's child splits the main.cpp
load_inline wrote into:
- main.cpp: the same lines with torch/extension.h read as torch/types.h (load_inline's own
  include and the candidate's, on their lines), without the PYBIND11_MODULE, and after them a
  forwarder per bound function (`kforge_fn_<i>`, calling it with its arguments forwarded) and
  the arrays of the functions' names and docstrings;
- kforge_bindings.cpp: torch/extension.h, a declaration of each forwarder (the function's
  signature as the candidate wrote it, defaults left out) and a PYBIND11_MODULE that binds
  forwarder i under name i with docstring i, as load_inline's binds the functions.
Both are compiled by torch's builder with the same flags (each through a precompiled header of
its first include: pch.py), and linked into one extension: the same functions bound under the
same names, in two translation units. The bindings' text names no function and no extension,
so it is the same for every candidate that binds functions of the same signatures. Its object
is kept in the build cache under a key of its text, the flags asked for and the toolchain, and
the next candidate with that key links it instead of compiling it: with its module init
(`PyInit_<name>`, the one exported symbol PYBIND11_MODULE makes) renamed by objcopy when that
candidate's extension has another name, and the module named after it when imported. The
flags torch's builder used are checked against the ones it was compiled with, the extension's
name aside.

What the split cannot read it refuses (`plan` says why) and the build is load_inline's: a
function not declared at namespace scope as `type name(params)`, a signature with a name that is
not one of torch's or the standard library's types, code that uses pybind11 or the parts of
libtorch only torch/extension.h brings, or conditionals on macros only torch/extension.h
defines. A split that fails to build is built again as load_inline would, so compiler messages
are always load_inline's.

Standard library only: the plan is made in the build's child, the key in the worker.
"""
import hashlib
import json
import os
import re

from .light_headers import _code_mask, tested_macros

BINDINGS_FILE = "kforge_bindings.cpp"
HOST_HEADER = "#include <torch/types.h>"
_EXTENSION = re.compile(r'([ \t]*#[ \t]*include[ \t]*)(<torch/extension\.h>|"torch/extension\.h")')
# The words a bound function's signature may use: torch's and the standard library's types
# and their namespaces. A name outside these (the candidate's own type, a macro, an attribute)
# would need the candidate's code in the bindings' unit: refused.
TYPE_WORDS = frozenset("""
torch at c10 std Tensor TensorList ArrayRef IntArrayRef Scalar ScalarType Device Layout
MemoryFormat Generator optional vector tuple pair string string_view Dimname
int long short unsigned signed char float double bool void const size_t
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
""".split())
# Parts of libtorch that torch/types.h does not bring (torch/all.h does): code naming them is
# built as written rather than tried on torch/types.h first and failed.
_HEAVY = re.compile(r"\btorch\s*::\s*(nn|optim|data|jit|serialize|autograd|python|cuda|special|fft|"
                    r"linalg|nested|sparse|utils)\b|\bpybind11\b|\bpy\s*::|\bPYBIND11_|\bTORCH_LIBRARY")
_USING = re.compile(r"using\s+namespace\s+(torch|at|std|c10)\s*;")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Refused(Exception):
    pass


def module_def(functions, with_pytorch_error_handling=True):
    """The PYBIND11_MODULE lines load_inline writes for `functions` (a name, a list or a dict
    of name to docstring)."""
    if isinstance(functions, str):
        functions = [functions]
    if isinstance(functions, list):
        functions = {f: f for f in functions}
    lines = ["PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {"]
    for name, doc in functions.items():
        if with_pytorch_error_handling:
            lines.append('m.def("{0}", torch::wrap_pybind_function({0}), "{1}");'.format(name, doc))
        else:
            lines.append('m.def("{0}", {0}, "{1}");'.format(name, doc))
    lines.append("}")
    return lines


def plan(main_text, functions, with_pytorch_error_handling=True, dropped_macros=()):
    """("split", host main.cpp, bindings' source) or ("refused", None, None); the third item
    or the why."""
    try:
        host, bindings = _plan(main_text, functions, with_pytorch_error_handling, dropped_macros)
    except Refused as e:
        return "refused", None, str(e)
    return "split", host, bindings


def _plan(main_text, functions, with_error_handling, dropped_macros):
    if not functions or not isinstance(functions, (str, list, dict)):
        raise Refused("no functions to bind (the candidate writes its own PYBIND11_MODULE)")
    names = [functions] if isinstance(functions, str) else list(functions)
    if not all(isinstance(n, str) and _IDENT.fullmatch(n) for n in names) or \
            len(set(names)) != len(names):
        raise Refused("a bound function's name is not a plain identifier")
    tail = "\n".join(module_def(functions, with_error_handling))
    lines = main_text.split("\n")
    if not main_text.endswith("\n" + tail) or not lines or \
            not _EXTENSION.fullmatch(lines[0].rstrip()):
        raise Refused("load_inline's main.cpp is not laid out as this torch's was")
    code_text = main_text[:len(main_text) - len(tail) - 1]
    mask = _code_mask(code_text)
    code = "".join(c if m else " " for c, m in zip(code_text, mask))
    heavy = _HEAVY.search(code)
    if heavy:
        raise Refused("the code names %s, which torch/types.h does not bring" % heavy.group(0))
    dropped = set(dropped_macros) & tested_macros([code_text])
    if dropped:
        raise Refused("a conditional tests %s, which only torch/extension.h defines"
                      % sorted(dropped)[0])
    # Scope is read from the braces outside the preprocessor's lines: a macro that opens or
    # closes one (an `extern "C" {`, a namespace) would hide where a function really is. One
    # whose braces balance (`do { ... } while (0)`) is harmless.
    outside, directive, opened = [], False, 0
    for line in code.split("\n"):
        directive = directive or line.lstrip().startswith("#")
        if directive:
            opened += line.count("{") - line.count("}")
            outside.append(" " * len(line))
        else:
            outside.append(line)
        if not (directive and line.rstrip().endswith("\\")):
            if opened:
                raise Refused("a macro opens or closes a brace")
            directive = False
    code = "\n".join(outside)
    depth = _depths(code)
    declarations = [_declaration(code, depth, name) for name in names]
    usings = [m.group(0) for m in _USING.finditer(code) if depth[m.start()] == 0]
    docs = functions if isinstance(functions, dict) else {n: n for n in names}
    host_lines = code_text.split("\n")
    for i, line in enumerate(host_lines):
        m = _EXTENSION.match(line)
        if m and mask[_offset(host_lines, i) + len(m.group(1))]:
            host_lines[i] = m.group(1) + "<torch/types.h>" + line[m.end():]
    # The bindings name no function: each is bound through a forwarder, kforge_fn_<i>, whose
    # name and docstring come from arrays the host unit defines, so candidates that bind other
    # names with the same signatures share one bindings object. All hidden: two extensions in
    # one process never resolve each other's.
    hidden = '__attribute__((visibility("hidden")))'
    forwarders, declared = [], []
    for i, (name, (_text, ret, types)) in enumerate(zip(names, declarations)):
        params = ", ".join("%s a%d" % (t, j) for j, t in enumerate(types))
        args = ", ".join("std::forward<%s>(a%d)" % (t, j) for j, t in enumerate(types))
        forwarders.append("%s %s kforge_fn_%d(%s) { return %s(%s); }" % (
            hidden, ret, i, params, name, args))
        declared.append("%s %s kforge_fn_%d(%s);" % (hidden, ret, i, ", ".join(types)))
    arrays = ['extern %s const char* const kforge_fn_%s[%d];' % (hidden, what, len(names))
              for what in ("names", "docs")]
    values = {"names": ", ".join('"%s"' % n for n in names),
              "docs": ", ".join('"%s"' % docs[n] for n in names)}
    host_lines += ["// kforge cached bindings: what the shared bindings unit binds, by number"]
    host_lines += forwarders + arrays + [
        '%s const char* const kforge_fn_%s[%d] = {%s};' % (hidden, what, len(names), values[what])
        for what in ("names", "docs")]
    host = "\n".join(host_lines) + "\n"
    wrap = "torch::wrap_pybind_function(kforge_fn_%d)" if with_error_handling else "kforge_fn_%d"
    module = ["PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {"] + [
        "m.def(kforge_fn_names[%d], %s, kforge_fn_docs[%d]);" % (i, wrap % i, i)
        for i in range(len(names))] + ["}"]
    bindings = "\n".join(["#include <torch/extension.h>"] + usings + declared + arrays +
                         module) + "\n"
    return host, bindings


def _offset(lines, i):
    return sum(len(line) + 1 for line in lines[:i])


def _depths(code):
    """The brace depth at each character of masked `code`."""
    depth, out = 0, []
    for c in code:
        if c == "}":
            depth -= 1
        out.append(depth)
        if c == "{":
            depth += 1
    return out


def _closing(code, i):
    level = 0
    for j in range(i, len(code)):
        if code[j] == "(":
            level += 1
        elif code[j] == ")":
            level -= 1
            if level == 0:
                return j
    raise Refused("unbalanced parentheses")


def _declaration(code, depth, name):
    """`name`'s declaration, `return-type name(params)` without defaults, its return type and
    its parameters' types, from its declarations and definition at namespace scope (all must
    agree)."""
    found = {}
    for m in re.finditer(r"\b%s\s*\(" % re.escape(name), code):
        if depth[m.start()] != 0:
            continue
        start = max(code.rfind(c, 0, m.start()) for c in ";{}") + 1
        head = code[start:m.start()].strip()  # the preprocessor's lines are blank already
        close = _closing(code, m.end() - 1)
        after = code[close + 1:].lstrip()
        if not after or after[0] not in "{;":
            raise Refused("%s is declared with more than a signature" % name)
        params = [_param(p, name) for p in _split_params(code[m.end():close])]
        ret = _words(head, name, "return type")
        if not ret:
            raise Refused("%s has no return type" % name)
        types = [t for t, _ in params if t]
        sig = "%s %s(%s)" % (ret, name, ", ".join(types))
        text = "%s %s(%s)" % (ret, name, ", ".join(p for _, p in params))
        found.setdefault(sig, (text, ret, types))
    if not found:
        raise Refused("%s is not declared at namespace scope" % name)
    if len(found) > 1:
        raise Refused("%s is declared with different signatures" % name)
    return next(iter(found.values()))


def _split_params(text):
    parts, level, cur = [], 0, ""
    for c in text:
        if c in "<([":
            level += 1
        elif c in ">)]":
            level -= 1
        if c == "," and level == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur)
    return parts


def _param(text, name):
    """(the parameter's type alone, the parameter as written without its default)."""
    text = text.split("=", 1)[0].strip()
    if text == "void":
        return "", ""
    words = _IDENT.findall(text)
    if not words:
        raise Refused("a parameter of %s has no type" % name)
    typ = text
    if words[-1] not in TYPE_WORDS and len(words) > 1 and re.search(r"\b%s\s*$" % words[-1], text):
        typ = text[:text.rfind(words[-1])].strip()
        _words(typ, name, "parameter")
    else:
        _words(typ, name, "parameter")
    return " ".join(typ.split()), " ".join(text.split())


def _words(text, name, what):
    for w in _IDENT.findall(text):
        if w not in TYPE_WORDS:
            raise Refused("%s's %s names %s" % (name, what, w))
    if re.search(r"[^\w\s:<>,&*]", text):
        raise Refused("%s's %s is not a plain type" % (name, what))
    return " ".join(text.split())


def key(bindings_text, spec, toolchain):
    """The bindings' cache key: their text, the flags the spec asks for and the toolchain
    (compiler, torch, Python) they are compiled with. Neither the extension's name nor its
    functions' are in it: the text binds numbered forwarders, and a kept object is linked under
    another extension's name with its module init renamed (`renamed_init`)."""
    parts = {"text": bindings_text, "toolchain": toolchain,
             "spec": {k: spec.get(k) for k in ("extra_cflags", "extra_include_paths", "with_cuda",
                                               "extra_ldflags")}}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:40]


_NAME_FLAG = re.compile(r"\s-DTORCH_EXTENSION_NAME=\S+")


def same_flags(kept, now):
    """Whether the flag lines a kept object was compiled with are the build's own but for the
    extension's name."""
    if kept is None or now is None:
        return False
    return [_NAME_FLAG.sub("", " " + line) for line in kept] == \
        [_NAME_FLAG.sub("", " " + line) for line in now]


def renamed_init(kept_name, name):
    """objcopy's arguments that give a kept bindings object compiled for extension `kept_name`
    the module init of `name` (PYBIND11_MODULE's PyInit_<name>; its other symbols are local)."""
    return ["--redefine-sym", "PyInit_%s=PyInit_%s" % (kept_name, name)]


def ninja_flags(build_dir):
    """The `cflags` and `post_cflags` lines of torch's build.ninja in `build_dir`."""
    try:
        with open(os.path.join(build_dir, "build.ninja")) as f:
            return [line.rstrip("\n") for line in f
                    if line.startswith("cflags =") or line.startswith("post_cflags =")]
    except OSError:
        return None
