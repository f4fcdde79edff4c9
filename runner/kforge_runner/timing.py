"""The judge's timed calls: the reference (eager and torch.compile) and the empty calls that
calibrate a candidate's times, run by the same compiled helper (`native.run_batch`) that times
the candidate, on the same slots' buffers.
"""
import torch

from .common import Perturber


def time_calls(native, problem, slots, msg, device, memory):
    """The reply to a time request: `msg["iters"]` calls of the mode's callable, numbered from
    `msg["first"]`, over the slots' inputs in turn, timed by `native` (kforge's compiled helper:
    passed in, so tests hand it a fake)."""
    mode = msg["mode"]
    fn, refused = _callable(problem, slots, msg)
    if refused is not None:
        return refused
    # The slots' buffers hold their pristine inputs: prepared, and no candidate has run on
    # them since (the lane prepares the pool again for each candidate).
    arg_sets = [list(s.in_bufs) for s in slots]
    before = None
    base = None
    if mode == "noop" and msg.get("perturb_seed"):
        arg_sets, before, base = _fresh_inputs(arg_sets, msg["perturb_seed"])
    try:
        with torch.no_grad():
            dev_ms, wall_ms, _, host_ms, hidden = native.run_batch(
                fn, arg_sets, int(msg["first"]), int(msg["iters"]),
                bool(msg.get("flush", True)), torch.device(device).type == "cuda",
                before, float(msg.get("delay_us", 0)))
    except Exception as e:  # torch.compile failures are reported, not fatal
        if mode == "compile":
            problem.compile_error = "torch.compile failed: %s" % str(e).splitlines()[0][:300]
            return {"ok": True, "unavailable": problem.compile_error}
        raise
    finally:
        if base is not None:
            for buf, x in zip(arg_sets[0], base):
                if isinstance(x, torch.Tensor):
                    buf.copy_(x)
            del base
        memory.settle()
    return {"ok": True, "device_ms": list(dev_ms), "wall_ms": list(wall_ms),
            "host_ms": list(host_ms), "hidden": int(hidden)}


def _callable(problem, slots, msg):
    """What a timing mode calls: (fn, None), or (None, the reply) when there is nothing to time
    (torch.compile unavailable or failed before; an unknown mode)."""
    mode = msg["mode"]
    if mode == "noop" and msg.get("outputs"):
        # An empty call that returns fresh outputs the size of the reference's, written
        # inside the timed call: what an honest candidate's outputs cost outside it
        # (released before the next call with their set, their pages given back) is then in
        # the calibration. The lane subtracts the reported (in-timer) part.
        like = slots[0].out_bufs

        def fn(*args):
            return [torch.empty_like(b).zero_() for b in like]
        return fn, None
    if mode == "noop":
        return noop, None
    if mode == "eager":
        return problem.model, None
    if mode == "compile":
        if problem.compiled is None and problem.compile_error is None:
            if not hasattr(torch, "compile"):
                problem.compile_error = ("torch.compile is not available in PyTorch %s"
                                         % torch.__version__)
            else:
                problem.compiled = torch.compile(problem.model)
        if problem.compile_error:
            return None, {"ok": True, "unavailable": problem.compile_error}
        return problem.compiled, None
    return None, {"ok": False, "message": "unknown timing mode %r" % mode}


def _fresh_inputs(arg_sets, perturb_seed):
    """What an empty call costs when each is given fresh inputs, as candidates are: the same
    rewrite of a slot's buffers from a copy of its inputs. One slot serves every call (the cost
    is the same) and gets its inputs back afterwards, so the memory for one copy suffices.
    Returns the calls' argument sets, the rewrite to run before each call, and the copy."""
    target = arg_sets[0]
    base = [x.clone() if isinstance(x, torch.Tensor) else x for x in target]
    perturber = Perturber(base, perturb_seed)

    def before(slot, index):
        perturber.apply(target, index)
    return [target] * len(arg_sets), before, base


def noop(*args):
    return None
