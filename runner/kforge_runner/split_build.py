"""Split builds: a candidate's kernels compiled without torch's headers, its host code with them.

Almost all of nvcc's time on a model-written extension is torch's headers: load_inline's
cuda.cu starts with `#include <torch/types.h>`, and nvcc parses that three times (cudafe++,
cicc, the host compiler), while the kernels themselves need only CUDA's headers. main.cpp
already includes torch/extension.h through a precompiled header. So, when asked, the build
worker first tries a split build of the same candidate:

- cuda.cu keeps, on their own lines, only what the device needs: the kernels, `__device__` and
  `__host__ __device__` functions, `__constant__` data, types, constants, macros and the
  standard and CUDA includes; everything else is blank lines, so every kept line keeps its
  number. load_inline's own `#include <torch/types.h>` reads a stand-in (SHADOW_HEADER, found
  first through an `-I` folder on nvcc's command line only) that includes the standard and
  CUDA headers torch's would have brought. After the kept code, one launch stub per launched
  kernel: `kforge_launch_<name>(grid, block, shared, stream, <the kernel's parameters>)`.
- main.cpp gets the host code (each piece under a `#line` naming its place in cuda.cu), with
  every `kernel<<<grid, block[, shared[, stream]]>>>(args)` turned into a call of that stub, and
  the types, constants and macros the host code may need, after load_inline's own
  torch/extension.h (the precompiled header). Host code is compiled at the optimisation level
  nvcc would have compiled it with (`#pragma GCC optimize`).

The device code is the candidate's own text, compiled by the same nvcc with the same flags; the
host code is the same text compiled by the same host compiler nvcc uses. What the split cannot
see it refuses (`plan` says why) and the worker builds the usual way: template kernels, kernels
whose address host code takes (cudaFuncSetAttribute, cudaLaunchKernel), device symbols host
code names (cudaMemcpyToSymbol), namespaces holding device code, preprocessor conditionals at
the top level or on a macro the split's device side may not define, quoted includes, nvcc flags
that are not device-only. A split build that fails for any reason is built again the usual way,
so compiler messages are always those of the usual build.

Standard library only, and no torch import: the plan is made in the worker before the fork.
"""
import re

from .light_headers import _code_mask, tested_macros

# Every split build's artifact key holds a digest of this file and light_headers.py
# (src/build/builder.cc, SplitRules): a change of the rules, of SHADOW_HEADER or of the stubs
# is never handed an old split artifact.

# What cuda.cu's `#include <torch/types.h>` reads in a split build: the headers a kernel may use
# without including them because torch's headers bring them (c10/util/Half.h includes
# cuda_fp16.h under nvcc, BFloat16.h cuda_bf16.h; the rest the standard library).
SHADOW_HEADER = """#pragma once
// kforge split build: torch's headers are compiled in main.cpp, not here.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cfloat>
#include <climits>
#include <cmath>
#include <algorithm>
#include <limits>
#include <type_traits>
#include <utility>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
"""

# Include prefixes that belong to torch (and pybind11): only the host side reads them.
_TORCH_INCLUDE = re.compile(r"\s*#\s*include\s*[<\"](torch|ATen|c10|caffe2|pybind11|THC|TH)/")
_INCLUDE = re.compile(r"\s*#\s*include\s*(<[^>]*>|\"[^\"]*\")")
# CUDA's device libraries: headers the host compiler of main.cpp cannot read (CCCL's cub, thrust
# and libcu++ sit in a folder only nvcc is told of; cooperative groups, WMMA and the pipeline
# primitives are device code). Their includes stay in cuda.cu alone; host code that uses them
# (cub's host API, thrust's vectors) then fails to compile and the worker builds the usual way.
# On an H100 2 of 115 public kernels fell back only because host code included cub/cub.cuh.
_DEVICE_LIBRARY = re.compile(r"<(cub|thrust|cuda|cooperative_groups)[/.>]|<(mma|cuda_pipeline)\.h>")
_DIRECTIVE = re.compile(r"\s*#\s*([A-Za-z_]+)")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|<<<|>>>|::|\S")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")

# Macros nvcc or the CUDA headers define on the device side: conditionals on them mean the same
# in both builds. Any other tested macro must be defined by the candidate's own sources.
_CUDA_MACROS = {"__CUDA_ARCH__", "__CUDACC__", "__NVCC__", "__CUDACC_VER_MAJOR__",
                "__CUDACC_VER_MINOR__", "__CUDA_ARCH_LIST__", "__CUDACC_RTC__", "CUDART_VERSION",
                "CUDA_VERSION", "__CUDA_ARCH_FEAT_SM90_ALL", "__cplusplus", "defined"}

# Macros only nvcc defines: the host code's compile in main.cpp (g++) does not see them, so host
# code that tests one would compile to something else than under nvcc's host pass.
_NVCC_ONLY = {"__CUDACC__", "__NVCC__", "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__",
              "__CUDACC_VER_BUILD__", "__CUDACC_DEBUG__", "__CUDACC_EXTENDED_LAMBDA__",
              "__CUDACC_RELAXED_CONSTEXPR__", "__CUDACC_RDC__", "__CUDACC_EWP__"}

# Attribute-like names that take parentheses in a kernel's header before its name.
_ATTRIBUTES = {"__launch_bounds__", "__attribute__", "__declspec", "alignas", "__align__",
               "__maxnreg__", "__cluster_dims__", "__grid_constant__"}

# nvcc flags that only change device code (or nothing the host compile sees): a split build keeps
# them on nvcc's line. -O<n> is the host code's optimisation level: moved to a pragma.
_DEVICE_FLAG = re.compile(
    r"(--?use_fast_math|-lineinfo|--?expt-relaxed-constexpr|--?expt-extended-lambda|"
    r"--extended-lambda|-Xptxas(=.*)?|--ptxas-options=.*|-maxrregcount(=\d+)?|--maxrregcount=\d+|"
    r"-ftz=(true|false)|-prec-div=(true|false)|-prec-sqrt=(true|false)|-fmad=(true|false)|"
    r"--ftz=(true|false)|--prec-div=(true|false)|--prec-sqrt=(true|false)|--fmad=(true|false)|"
    r"-res-usage|--resource-usage|-std=c\+\+1[47]|-std=c\+\+17|--std=c\+\+17|-w|"
    r"-Wno-deprecated-gpu-targets|--restrict|-restrict)$")
_OPT_FLAG = re.compile(r"-O([0-3s]?)$")

STUB_PREFIX = "kforge_launch_"


class Refused(Exception):
    """The split would not be sure to build the same program; the message says why."""


def _mask_text(text):
    """`text` with comments, strings and character literals replaced by spaces (newlines kept):
    what the scanner below reads."""
    mask = _code_mask(text)
    return "".join(c if m or c == "\n" else " " for c, m in zip(text, mask))


class Item:
    """One top-level piece of the sources: a directive line or a declaration/definition."""

    def __init__(self, start, end, kind):
        self.start, self.end, self.kind = start, end, kind
        self.side = None       # "device", "host" or "both"
        self.kernel = None     # (name, params text) for a __global__ definition


def _items(code):
    """Top-level items of `code` (comments and strings blanked): directives (with their
    continuation lines) and declarations, each (start, end) in `code`."""
    items, i, n = [], 0, len(code)
    while i < n:
        if code[i].isspace():
            i += 1
            continue
        if code[i] == "#":
            k = _directive_end(code, i, n)
            items.append(Item(i, k, "directive"))
            i = k
            continue
        items.append(_declaration(code, i))
        i = items[-1].end
    return items


def _directive_end(code, i, end):
    """Where the directive line holding position `i` ends (the newline after its last
    continuation line), or `end` when that comes first."""
    k = code.find("\n", i, end)
    while k > 0 and code[k - 1] == "\\":
        k = code.find("\n", k + 1, end)
    return end if k < 0 else k


def _declaration(code, i):
    """The declaration starting at `i`: ends at `;` at depth 0, or at the `}` that closes its
    first top-level brace unless it is a class, an enum or an initialiser (then at the `;`)."""
    depth, n, start = 0, len(code), i
    braced = False
    while i < n:
        c = code[i]
        if c == "#" and depth > 0 and _line_start(code, i):
            i = _directive_end(code, i, n)
            continue
        if c == "#" and depth == 0 and _line_start(code, i):
            raise Refused("a directive inside a declaration at the top level")
        if c in "([{":
            if c == "{" and depth == 0:
                braced = True
                head = code[start:i]
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                raise Refused("unbalanced brackets")
            if c == "}" and depth == 0 and not re.search(
                    r"\b(struct|class|union|enum|typedef)\b|=\s*$", head):
                item = Item(start, i + 1, "definition")
                return item
        elif c == ";" and depth == 0:
            return Item(start, i + 1, "definition" if braced else "declaration")
        i += 1
    raise Refused("unbalanced brackets" if depth else "a declaration without an end")


def _line_start(code, i):
    j = code.rfind("\n", 0, i) + 1
    return not code[j:i].strip()


def _tokens(text):
    return _TOKEN.findall(text)


def _groups(code, start, end):
    """(open, close) of each top-level parenthesised group of code[start:end]."""
    out, depth, at = [], 0, None
    for i in range(start, end):
        c = code[i]
        if c == "(":
            if depth == 0:
                at = i
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                out.append((at, i))
        elif c == "{" and depth == 0:
            break
    return out


def _split_commas(text, code=None, angles=True):
    """`text` split at the commas of `code` (the same text with comments and strings blanked;
    `text` itself when None) outside (), [], {} and, with `angles` (a parameter list, where
    they are template arguments), <>."""
    code = text if code is None else code
    opens, closes = ("([{<", ")]}>") if angles else ("([{", ")]}")
    parts, depth, at = [], 0, 0
    for i, c in enumerate(code):
        if c in opens:
            depth += 1
        elif c in closes:
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[at:i])
            at = i + 1
    parts.append(text[at:])
    return [p.strip() for p in parts]


_NOT_A_NAME = {"const", "volatile", "__restrict__", "__restrict", "restrict", "int", "float",
               "double", "char", "long", "short", "unsigned", "signed", "bool", "void", "auto",
               "size_t", "int64_t", "int32_t", "uint32_t", "uint64_t", "half", "__half",
               "__grid_constant__"}


def _param_names(params):
    """The names of a kernel's parameters, in order; Refused when one has none, a default, an
    array declarator or a pack."""
    text = params.strip()
    if text in ("", "void"):
        return []
    names = []
    for p in _split_commas(text):
        if "=" in p or "[" in p or "..." in p or "(" in p:
            raise Refused("a kernel parameter the split does not pass on: %r" % p[:60])
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", p)
        if not m or m.group(1) in _NOT_A_NAME or len(_tokens(p)) < 2:
            raise Refused("an unnamed kernel parameter: %r" % p[:60])
        names.append(m.group(1))
    return names


def _template_params(code, item):
    """The text between a template declaration's `template <` and its `>`, or None."""
    m = re.match(r"\s*template\s*<", code[item.start:item.end])
    if not m:
        return None
    start = item.start + m.end()
    close = _matching_angle(code, start - 1, item.end)
    if close < 0:
        raise Refused("a template parameter list that does not close")
    tparams = code[start:close]
    if "..." in tparams:
        raise Refused("a kernel with a template parameter pack")
    return tparams


def _matching_angle(code, at, end):
    """The index of the `>` that closes the `<` at `at` (parentheses nest inside), or -1."""
    depth = 0
    for i in range(at, end):
        c = code[i]
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
            if depth == 0:
                return i if c == ">" else -1
    return -1


def _template_names(tparams):
    """The names a template parameter list declares, in order."""
    names = []
    for p in _split_commas(tparams):
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", p.split("=")[0])
        if not m or m.group(1) in ("typename", "class") or len(_tokens(p.split("=")[0])) < 2:
            raise Refused("an unnamed template parameter: %r" % p[:60])
        names.append(m.group(1))
    return names


def _kernel(code, item):
    """(name, params, template params or None) of a __global__ definition; Refused for what the
    split does not pass on."""
    tparams = _template_params(code, item)
    groups = _groups(code, item.start, item.end)
    for open_, close in groups:
        m = re.search(r"([A-Za-z_][A-Za-z0-9_:]*)\s*$", code[item.start:open_])
        if not m or m.group(1) in _ATTRIBUTES:
            continue
        name = m.group(1)
        if "::" in name:
            raise Refused("kernel %s is defined out of its namespace" % name)
        return name, code[open_ + 1:close], tparams
    raise Refused("a kernel without a parameter list")


def _classify(code, item, text):
    """Sets item.side (and item.kernel); Refused for items the split cannot place."""
    body = code[item.start:item.end]
    toks = _tokens(body)
    tokset = set(toks)
    if item.kind == "directive":
        d = _DIRECTIVE.match(body)
        word = d.group(1) if d else ""
        if word == "include":
            if _TORCH_INCLUDE.match(body):
                item.side = "host"
                return
            inc = _INCLUDE.match(text[item.start:item.end])
            if not inc or inc.group(1).startswith('"'):
                raise Refused("a quoted or computed include: %s" % body.strip()[:80])
            item.side = "device" if _DEVICE_LIBRARY.match(inc.group(1)) else "both"
        elif word in ("define", "undef"):
            if "<<<" in body:  # its expansions cannot be rewritten into stub calls
                raise Refused("a kernel launch inside a macro")
            item.side = "both"
        elif word == "pragma":
            item.side = "device" if "once" in tokset else "both"
        else:
            raise Refused("a #%s at the top level" % word)
        return
    head_end = body.find("{")
    head = _tokens(body if head_end < 0 else body[:head_end])
    head_set = set(head)
    block = "namespace" in head_set or head == ["extern"]  # extern "C" { ... } (strings masked)
    if "__global__" in tokset:
        if block:
            raise Refused("device code inside a namespace or linkage block")
        if "template" in head_set and head[:1] != ["template"]:
            raise Refused("a template kernel inside another declaration")
        if "__global__" not in head_set:
            raise Refused("a kernel inside another declaration")
        item.side = "device"
        if head[:1] == ["extern"] and head[1:2] != ["__global__"]:
            raise Refused("a kernel with a linkage the stub cannot name")
        if item.kind == "definition":
            item.kernel = _kernel(code, item)
        return
    device_words = {"__device__", "__constant__", "__managed__", "__shared__"}
    if block:
        if tokset & (device_words | {"__host__", "__global__"}):
            raise Refused("device code inside a namespace or linkage block")
        if "using" in head_set and "namespace" in head_set and head[-2:-1] == ["std"]:
            item.side = "both"
            return
        item.side = "host"
        return
    if head_set & {"struct", "class", "union", "enum", "typedef"} or (
            "using" in head_set and "namespace" not in head_set):
        item.side = "host" if _mentions_torch(toks) else "both"
        return
    if head_set & device_words:
        item.side = "both" if "__host__" in head_set else "device"
        return
    if "(" not in head and ("constexpr" in head_set or head[:1] == ["const"] or
                            head[:2] == ["static", "const"]):
        item.side = "host" if _mentions_torch(toks) else "both"
        return
    item.side = "host"


def _mentions_torch(toks):
    return any(t in ("torch", "at", "c10", "py", "pybind11", "caffe2") and
               i + 1 < len(toks) and toks[i + 1] == "::" for i, t in enumerate(toks))


def _defined_macros(code):
    return set(re.findall(r"(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)", code))


def _launches(text, code, start, end, kernels):
    """Each `name[<targs>]<<<config>>>(args)` in code[start:end]: (name_start, name, targs or
    None, config parts, args_open, args_close); Refused for a launch of something other than a
    known kernel."""
    out, i = [], start
    while True:
        at = code.find("<<<", i, end)
        if at < 0:
            return out
        before, targs = code[start:at].rstrip(), None
        if before.endswith(">"):  # name<targs><<<
            close = start + len(before) - 1
            depth, j = 0, close
            while j >= start:
                if code[j] in ">)":
                    depth += 1
                elif code[j] in "<(":
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            if j < start or code[j] != "<":
                raise Refused("a launch whose template arguments do not open")
            targs = text[j + 1:close].strip()
            before = code[start:j].rstrip()
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)$", before)
        if not m or code[start + m.start() - 1:start + m.start()] == ":":
            raise Refused("a launch of a qualified kernel")
        name = m.group(1)
        if name not in kernels:
            raise Refused("a launch of %s, not a kernel the split passes on" % name)
        close = code.find(">>>", at + 3, end)
        if close < 0:
            raise Refused("a launch without its >>>")
        config = _split_commas(text[at + 3:close], code[at + 3:close], angles=False)
        if not 2 <= len(config) <= 4 or not all(config):
            raise Refused("a launch configuration of %d parts" % len(config))
        j = close + 3
        while j < end and code[j].isspace():
            j += 1
        if j >= end or code[j] != "(":
            raise Refused("a launch without arguments")
        depth, k = 0, j
        while k < end:
            if code[k] == "(":
                depth += 1
            elif code[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        if k >= end:
            raise Refused("a launch whose arguments do not close")
        out.append((start + m.start(), name, targs, config, j, k))
        i = k + 1


def _host_optimisation(cuda_flags):
    """The -O level nvcc would pass to the host compiler (None: its default, none), and the
    flags refused because they are not device-only."""
    level, refused = None, []
    for f in (f.strip() for f in cuda_flags):  # torch's builder strips each flag too
        if not f:
            continue
        m = _OPT_FLAG.match(f)
        if m:
            level = m.group(1) or "1"
        elif not _DEVICE_FLAG.match(f):
            refused.append(f)
    return level, refused


def plan(spec, cuda_path="cuda.cu", prefix_lines=3, nvcc_defines=()):
    """A split build of `spec` (the build request's spec): ("split", new spec, stubs) or
    ("refused", None, why). `cuda_path`: the file the host code's #line directives name;
    `prefix_lines`: the lines load_inline writes before the CUDA sources; `nvcc_defines`: the
    macros torch's builder defines on nvcc's command line only (NAME or NAME=VALUE), defined
    for the host code too, as nvcc's host compile saw them."""
    try:
        return ("split",) + _plan(spec, cuda_path, prefix_lines, list(nvcc_defines))
    except Refused as e:
        return "refused", None, str(e)


def _plan(spec, cuda_path, prefix_lines, nvcc_defines):
    sources = spec.get("cuda_sources") or []
    if isinstance(sources, str):
        sources = [sources]
    if not sources:
        raise Refused("no CUDA sources")
    level, bad_flags = _host_optimisation(spec.get("extra_cuda_cflags") or [])
    if bad_flags:
        raise Refused("nvcc flags that reach the host compile: %s" % " ".join(bad_flags[:4]))
    if spec.get("extra_include_paths"):
        raise Refused("extra include folders")
    text = "\n".join(sources)
    code = _mask_text(text)
    items = _items(code)
    for item in items:
        _classify(code, item, text)
    tested = tested_macros([text]) - _CUDA_MACROS - _defined_macros(code)
    if tested:
        raise Refused("the sources test %s, which torch's headers may define" %
                      ", ".join(sorted(tested)[:4]))
    for item in items:
        if item.side in ("host", "both") and item.kind != "directive":
            nvcc_only = tested_macros([text[item.start:item.end]]) & _NVCC_ONLY
            if nvcc_only:
                raise Refused("host code tests %s, which only nvcc defines" %
                              ", ".join(sorted(nvcc_only)))
    kernels = {}  # name: (params, template params or None)
    for item in items:
        if item.kernel:
            if item.kernel[0] in kernels:
                raise Refused("kernel %s is defined twice" % item.kernel[0])
            kernels[item.kernel[0]] = item.kernel[1:]
    macros = _defined_macros(code)
    device_names = set()
    for item in items:
        if item.side == "device" and not item.kernel and item.kind != "directive":
            m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]]*\]\s*)*(=[^;]*)?;?\s*$",
                          code[item.start:item.end].split("{")[0].split("(")[0])
            if m:
                device_names.add(m.group(1))
    # Host code: launches become stub calls; naming a kernel or a device symbol otherwise is
    # refused (its address would be the stub's, or undeclared).
    launched, host_parts = {}, []  # launched: name -> the template arguments instantiated
    for item in items:
        if item.side not in ("host", "both") or item.kind == "directive":
            continue
        launches = _launches(text, code, item.start, item.end, kernels)
        pieces, pos = [], item.start
        for name_at, name, targs, config, a_open, a_close in launches:
            instances = launched.setdefault(name, [])
            if kernels[name][1] is None:
                if targs is not None:
                    raise Refused("template arguments for kernel %s, which has none" % name)
            elif targs is None:
                raise Refused("template kernel %s launched with deduced arguments" % name)
            else:
                for inst in _instances(code, item, name_at, targs, macros):
                    if inst not in instances:
                        instances.append(inst)
            config = config + ["0", "0"][:4 - len(config)]
            args = text[a_open + 1:a_close].strip()
            pieces.append(text[pos:name_at])
            pieces.append("%s%s%s(%s%s)" % (STUB_PREFIX, name,
                                            "<%s>" % targs if targs is not None else "",
                                            ", ".join(config), (", " + args) if args else ""))
            pos = a_close + 1
        pieces.append(text[pos:item.end])
        rewritten = "".join(pieces)
        named = set(_tokens(_mask_text(rewritten)))  # the stubs' names are not the kernels'
        for name in (set(kernels) | device_names) & named:
            raise Refused("host code names %s other than in a launch" % name)
        host_parts.append((item, rewritten))
    if not launched:
        raise Refused("no kernel launch in host code")
    stubs = {name: Stub(name, *kernels[name], launched[name]) for name in launched}
    device = _device_text(text, items, stubs)
    host = _host_text(text, items, host_parts, stubs, level, cuda_path, prefix_lines,
                      nvcc_defines)
    out = dict(spec)
    out["cuda_sources"] = [device]
    cpp = spec.get("cpp_sources") or []
    out["cpp_sources"] = ([cpp] if isinstance(cpp, str) else list(cpp)) + [host]
    return out, sorted(launched)


# What a template argument may be for the split to list its instantiations: literals, builtin
# types, the candidate's own macros, and scalar_t inside a dispatch macro whose types it knows.
_BUILTIN = {"float", "double", "int", "unsigned", "long", "short", "char", "bool", "signed",
            "true", "false", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
            "uint32_t", "uint64_t", "size_t", "float2", "float4", "int2", "int4"}
_DISPATCH_TYPES = {"AT_DISPATCH_FLOATING_TYPES": ("float", "double")}


def _instances(code, item, at, targs, macros, depth=0):
    """The template arguments a launch at `at` (in `item`) instantiates: `targs` itself when it
    names only literals, builtin types and the sources' macros; one per type when it names
    scalar_t inside a dispatch macro of known types; when it names the parameters of a
    function-like macro defined in the same function (`#define LAUNCH(T) k<T><<<...>>>(...)`),
    those of every use of that macro there. Refused otherwise."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", targs)) - _BUILTIN - macros
    if not names:
        return [targs]
    local = _local_macro(code, item, at)
    if local and names <= set(local[1]) and depth < 4:
        name, params, define_end = local
        out = []
        for use_at, args in _macro_uses(code, item, name, define_end):
            if len(args) != len(params):
                raise Refused("a use of %s with %d arguments for %d parameters" %
                              (name, len(args), len(params)))
            bound = dict(zip(params, args))
            inst = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: bound.get(m.group(0), m.group(0)),
                          targs)
            for i in _instances(code, item, use_at, inst, macros, depth + 1):
                if i not in out:
                    out.append(i)
        return out
    if names != {"scalar_t"}:
        raise Refused("template arguments the split cannot list: %s" % targs[:60])
    for m in reversed(list(re.finditer(r"\b(AT_DISPATCH_[A-Z0-9_]+)\s*\(", code[item.start:at]))):
        if _closing_paren(code, item.start + m.end() - 1, item.end) > at:  # inside this dispatch
            types = _DISPATCH_TYPES.get(m.group(1))
            if types is None:
                raise Refused("a launch inside %s, whose types the split does not list" % m.group(1))
            return [re.sub(r"\bscalar_t\b", t, targs) for t in types]
    raise Refused("template arguments the split cannot list: %s" % targs[:60])


def _closing_paren(code, open_, end):
    """Where the `(` at `open_` closes, or `end` when it does not before it."""
    depth, k = 0, open_
    while k < end:
        depth += {"(": 1, ")": -1}.get(code[k], 0)
        if depth == 0:
            return k
        k += 1
    return end


def _local_macro(code, item, at):
    """(name, parameter names, end) of the function-like `#define` inside `item` whose body
    holds position `at` (continuation lines included), or None."""
    start = code.rfind("\n", item.start, at) + 1
    while start > item.start + 1 and code[start - 2] == "\\":  # the line before continues
        start = code.rfind("\n", item.start, start - 1) + 1
    m = re.match(r"[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)\(([^)]*)\)", code[start:at])
    if not m:
        return None
    params = [p.strip() for p in m.group(2).split(",") if p.strip()]
    return m.group(1), params, _directive_end(code, at, item.end)


def _macro_uses(code, item, name, after):
    """Each use of macro `name` in code[after:item.end]: (position, [arguments])."""
    out = []
    for m in re.finditer(r"\b%s\s*\(" % re.escape(name), code[after:item.end]):
        open_ = after + m.end() - 1
        k = _closing_paren(code, open_, item.end)
        if k >= item.end:
            raise Refused("a use of %s whose arguments do not close" % name)
        out.append((after + m.start(), _split_commas(code[open_ + 1:k], angles=False)))
    return out


class Stub:
    """One kernel's launch stub: its parameters and, for a template kernel, its template
    parameters and the instantiations host code launches."""

    def __init__(self, name, params, tparams, instances):
        self.name, self.params, self.tparams, self.instances = name, params.strip(), tparams, instances
        self.names = _param_names(params)
        self.tnames = _template_names(tparams) if tparams is not None else []

    def head(self, named=True):
        params = "dim3 kforge_grid, dim3 kforge_block, size_t kforge_shared, cudaStream_t kforge_stream"
        if not named:
            params = "dim3, dim3, size_t, cudaStream_t"
        if self.params and self.params != "void":
            params += ", " + self.params
        t = "template <%s>\n" % self.tparams if self.tparams is not None else ""
        return "%svoid %s%s(%s)" % (t, STUB_PREFIX, self.name, params)

    def definition(self):
        targs = "<%s>" % ", ".join(self.tnames) if self.tparams is not None else ""
        out = "%s {\n  %s%s<<<kforge_grid, kforge_block, kforge_shared, kforge_stream>>>(%s);\n}\n" % (
            self.head(), self.name, targs, ", ".join(self.names))
        # Each instantiation host code launches, emitted here (where the kernel is compiled)
        # for main.cpp's calls to link against.
        for i, inst in enumerate(self.instances):
            out += ("static const auto kforge_keep_%s_%d __attribute__((used)) = &%s%s<%s>;\n" % (
                self.name, i, STUB_PREFIX, self.name, inst))
        return out


def _device_text(text, items, stubs):
    keep = []
    pos = 0
    for item in items:
        if item.side in ("device", "both"):
            keep.append(_blank(text[pos:item.start]))
            keep.append(text[item.start:item.end])
            pos = item.end
    keep.append(_blank(text[pos:]))
    out = "".join(keep)
    out += "\n// kforge split build: one launch stub per kernel host code launches.\n"
    for name in sorted(stubs):
        out += stubs[name].definition()
    return out


def _blank(s):
    """`s` as blank lines: the same number of newlines, nothing else."""
    return "\n" * s.count("\n")


def _host_text(text, items, host_parts, stubs, level, cuda_path, prefix_lines, nvcc_defines):
    out = ["// kforge split build: the host code of cuda.cu."]
    for d in nvcc_defines:
        name, _, value = d.partition("=")
        out.append("#define %s %s" % (name, value) if value else "#define %s" % name)
    out += ["#include <cuda.h>", "#include <cuda_runtime.h>"]
    if level is not None:
        out += ["#pragma GCC push_options", '#pragma GCC optimize ("O%s")' % level]
    parts = dict((id(i), r) for i, r in host_parts)
    declared = set()
    for item in items:
        if item.kernel and item.kernel[0] in stubs and item.kernel[0] not in declared:
            declared.add(item.kernel[0])
            out.append(stubs[item.kernel[0]].head(named=False) + ";")
            continue
        if item.side not in ("host", "both"):
            continue
        line = prefix_lines + text.count("\n", 0, item.start) + 1
        body = parts.get(id(item), text[item.start:item.end])
        out.append('#line %d "%s"' % (line, cuda_path))
        out.append(body)
    if level is not None:
        out.append("#pragma GCC pop_options")
    return "\n".join(out) + "\n"


def source_starts(spec, first=4):
    """Where each of `spec`'s CUDA source strings starts (1-based line) in a split build's
    cuda.cu, whose one string starts at line `first` (0: not found, then none is): where it
    starts in load_inline's, since the split keeps every line in place."""
    sources = spec.get("cuda_sources") or []
    if isinstance(sources, str):
        sources = [sources]
    if not first:
        return [0] * len(sources)
    starts, line = [], first
    for src in sources:
        starts.append(line)
        line += src.count("\n") + 1
    return starts
