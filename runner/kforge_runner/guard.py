"""Runtime facts for the legality rules, gathered inside the candidate process.

The decisions are made by the C++ supervisor (src/execute/runtime_rules.cc); this module only
observes: which aten ops ran at the outermost level of one forward call, which GPU kernels
ran, how often the candidate's own extension functions were called, and (for the ablation
call) replaces the extension's tensor results with NaN so the judge can see whether they matter.
"""
import os
import warnings

import torch


class ExtensionProxy:
    """Stands in for an extension module: counts calls, and in ablation mode makes its functions
    no-ops. A function that returned something is called and its tensors come back as NaN; one
    that returned nothing in the calls before (it writes its answer into a tensor it was
    handed, `f(x, w, out)`) is not called at all, so what it would have written stays the
    allocator's poison. Either way the answer may only stay correct if the work is done
    elsewhere."""

    def __init__(self, module, state):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_state", state)

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if not callable(value) or name.startswith("__"):
            return value
        state = self._state

        def call(*args, **kwargs):
            state["calls"] += 1
            void = state.setdefault("void", set())
            if state["ablate"] and name in void:
                return None
            out = value(*args, **kwargs)
            if state["ablate"]:
                return _poison_like(out)
            if out is None:
                void.add(name)
            else:
                void.discard(name)
            return out
        call.__name__ = name
        call.__doc__ = getattr(value, "__doc__", None)
        return call

    def __setattr__(self, name, value):
        setattr(self._module, name, value)

    def __dir__(self):
        return dir(self._module)


def _poison_like(out):
    if isinstance(out, torch.Tensor):
        if out.is_floating_point():
            return torch.full_like(out, float("nan"))
        return torch.full_like(out, -7)
    if isinstance(out, (tuple, list)):
        return type(out)(_poison_like(o) for o in out)
    return out


try:  # bound before any candidate code runs, like everything else this module uses
    from torch.autograd import profiler_legacy as _profiler_legacy
except ImportError:  # a PyTorch that has dropped it
    _profiler_legacy = None
from torch.profiler import ProfilerActivity as _ProfilerActivity
from torch.profiler import profile as _torch_profile

# Which profiler records the aten ops: "legacy" (the default where PyTorch still has it) or
# "kineto" (KFORGE_PROFILER=kineto). Both record the same RecordFunction events on the calling
# thread, which is all the rules need. Kineto initialises CUPTI on its first use in a process
# whenever CUDA is present, even for CPU activity only: 5 to 8 s per candidate on the H200
# (measured 2026-11-30), most of a fast kernel's verification. The legacy one never touches it.
PROFILER = "kineto" if _profiler_legacy is None else os.environ.get("KFORGE_PROFILER") or "legacy"

# A profiler scope whose ATen ops are kforge's business, not the candidate's: Triton's
# autotuner timing configurations (triton_hooks.py). Ops inside it are left out of the facts.
EXCLUDED_SCOPE = "kforge::triton_autotune"


def profile(fn, cuda):
    """Runs fn() under the PyTorch profiler; returns (result, facts)."""
    # CPU activity only: it records every aten op, which is what the rules need; kernel names
    # are left to the static rules on the kernel sources.
    legacy = PROFILER == "legacy"
    if legacy:
        with warnings.catch_warnings():  # it is marked deprecated
            warnings.simplefilter("ignore")
            prof = _profiler_legacy.profile()
    else:
        prof = _torch_profile(activities=[_ProfilerActivity.CPU])
    with prof:
        out = fn()
        if cuda:
            torch.cuda.synchronize()
    events = prof.function_events if legacy else prof.events()
    aten, kernels = set(), set()
    for e in events:
        name = e.name
        if name.startswith("aten::"):
            parent, nested, excluded = e.cpu_parent, False, False
            while parent is not None:
                nested = nested or parent.name.startswith("aten::")
                excluded = excluded or parent.name == EXCLUDED_SCOPE
                parent = parent.cpu_parent
            if not nested and not excluded:
                aten.add(name)
        for k in getattr(e, "kernels", None) or []:
            kernels.add(k.name)
        if str(getattr(e, "device_type", "")).endswith("CUDA") and not name.startswith("aten::"):
            kernels.add(name)
    return out, {"aten": sorted(aten), "kernels": sorted(kernels)[:200]}
