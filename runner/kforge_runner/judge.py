"""The judge: the trusted process of an execution lane.

It loads problems, draws inputs on the device, computes and keeps the reference outputs, lays
inputs into shared buffers for the candidate, compares what the candidate wrote back, and times
the reference (eager and torch.compile) with the same compiled helper the candidate is timed
with. Expected outputs never leave this process.
"""
import importlib.util
import os
import sys
import tempfile
import traceback

import torch

from . import transport
from .channel import Channel
from .common import Perturber, as_list, device_sync, load_extension, parse_fd

native = None

# Default tolerances per dtype (DESIGN.md); the supervisor may override them.
TOLERANCE = {"float32": 1e-4, "float64": 1e-7, "float16": 1e-2, "bfloat16": 1e-2}


def _device_ctx(device):
    # torch >= 2.0 can make factory functions allocate on the device directly.
    if hasattr(torch, "device") and hasattr(torch.device(device), "__enter__"):
        return torch.device(device)
    return None


class Slot:
    """One set of shared buffers: the candidate's inputs and the outputs it must write."""

    def __init__(self, exporter, inputs, refs):
        self.exporter = exporter
        self.in_bufs, self.in_descs = [], []
        for x in inputs:
            if isinstance(x, torch.Tensor):
                t, d = exporter.new(x.shape, x.dtype)
                self.in_bufs.append(t)
                self.in_descs.append({"tensor": d})
            else:
                self.in_bufs.append(x)
                self.in_descs.append({"value": x})
        self.out_bufs, self.out_descs = [], []
        for r in refs:
            t, d = exporter.new(r.shape, r.dtype)
            self.out_bufs.append(t)
            self.out_descs.append(d)
        self.signature = self._signature(inputs, refs)
        self.pristine, self.refs = [], []
        self.replay_refs = None  # for a swapped trial: the answers to the unswapped inputs

    @staticmethod
    def _signature(inputs, refs):
        def sig(x):
            if isinstance(x, torch.Tensor):
                return ("t", tuple(x.shape), str(x.dtype))
            return ("v", repr(x))
        return tuple(sig(x) for x in inputs), tuple(sig(r) for r in refs)

    def fill(self, inputs, refs, replay_refs=None):
        self.replay_refs = replay_refs
        self.pristine = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        for buf, x in zip(self.in_bufs, inputs):
            if isinstance(x, torch.Tensor):
                buf.copy_(x)
        self.refs = refs
        self.poison()

    def poison(self):
        for t in self.out_bufs:
            transport.poison(t)
        device_sync(self.out_bufs[0].device if self.out_bufs else "cpu")

    def describe(self):
        return {"inputs": self.in_descs, "outputs": self.out_descs}

    def release(self):
        for d in self.in_descs:
            if "tensor" in d:
                self.exporter.release(d["tensor"])
        for d in self.out_descs:
            self.exporter.release(d)


class Problem:
    def __init__(self, msg, device, exporter):
        self.id = msg["id"]
        self.device = torch.device(device)
        self.exporter = exporter
        spec = importlib.util.spec_from_file_location("kforge_problem_%d" % id(self), msg["path"])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.module = module
        for name in ("Model", "get_inputs", "get_init_inputs"):
            if not hasattr(module, name):
                raise ValueError("problem %s defines no %s" % (msg["path"], name))
        self.init_seed = int(msg["init_seed"])
        torch.manual_seed(self.init_seed)
        self.init_inputs = list(module.get_init_inputs())
        torch.manual_seed(self.init_seed)
        self.model = module.Model(*self.init_inputs).to(self.device)
        self.compiled = None
        self.compile_error = None
        self.slots = {}
        # Other sizes the problem declares valid (H19): module globals to set while drawing,
        # e.g. KFORGE_SHAPE_VARIANTS = [{"batch_size": 3, "dim": 1000}].
        self.variants = list(getattr(module, "KFORGE_SHAPE_VARIANTS", []) or [])
        for i, v in enumerate(self.variants):
            if not isinstance(v, dict) or not all(hasattr(module, k) for k in v):
                raise ValueError("KFORGE_SHAPE_VARIANTS[%d] must be a dict of the problem's own "
                                 "module globals, got %r" % (i, v))

    def _get_inputs(self, variant):
        saved = {}
        if variant is not None:
            for k, v in self.variants[variant].items():
                saved[k] = getattr(self.module, k)
                setattr(self.module, k, v)
        try:
            ctx = _device_ctx(self.device)
            if ctx is not None:
                with ctx:
                    return list(self.module.get_inputs())
            return list(self.module.get_inputs())
        finally:
            for k, v in saved.items():
                setattr(self.module, k, v)

    def draw(self, seed, signed, variant=None):
        torch.manual_seed(seed)
        inputs = self._get_inputs(variant)
        inputs = [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in inputs]
        if signed:
            # Same shapes, values of both signs: catches kernels that only work on the
            # problem's own input distribution (ReLU of non-negative inputs, say).
            inputs = [torch.randn_like(x) if isinstance(x, torch.Tensor) and x.is_floating_point()
                      else x for x in inputs]
        return inputs

    def reference(self, inputs):
        copies = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            refs = as_list(self.model(*copies))
        for r in refs:
            if not isinstance(r, torch.Tensor):
                raise ValueError("the reference returned a %s, not a tensor" % type(r).__name__)
        return [r.detach().clone() for r in refs]

    def slot(self, name, inputs, refs, replay_refs=None):
        slot = self.slots.get(name)
        sig = Slot._signature(inputs, refs)
        if slot is None or slot.signature != sig:
            if slot is not None:
                slot.release()
            slot = Slot(self.exporter, inputs, refs)
            self.slots[name] = slot
        slot.fill(inputs, refs, replay_refs)
        return slot

    def release(self):
        for s in self.slots.values():
            s.release()
        self.slots = {}


def swap_some(inputs, seed, pairs=16):
    """The same inputs with a few pairs of elements swapped in each tensor (H06): the values,
    their sum and their range are unchanged, so a cache keyed on a sample or a checksum of the
    contents finds its old entry and replays a wrong answer."""
    g = torch.Generator()
    g.manual_seed(int(seed))
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.numel() >= 2:
            y = x.clone(memory_format=torch.contiguous_format)
            flat = y.view(-1)
            idx = torch.randint(0, flat.numel(), (2 * pairs,), generator=g).to(y.device)
            a, b = idx[:pairs], idx[pairs:]
            va = flat[a].clone()
            flat[a] = flat[b]
            flat[b] = va
            out.append(y)
        else:
            out.append(x)
    return out


def _finite(refs):
    return all(bool(torch.isfinite(r).all()) for r in refs if r.is_floating_point())


def compare(out, ref, atol, rtol):
    """Compare one output with its reference; returns (ok, facts)."""
    facts = {}
    if ref.is_floating_point() and out.dtype == ref.dtype:
        # One pass for the common case; the detailed account below only for failures.
        finite_ok = bool((torch.isfinite(out) | ~torch.isfinite(ref)).all())
        if finite_ok and torch.allclose(out, ref, rtol=rtol, atol=atol, equal_nan=True):
            return True, {"bad_elements": 0, "elements": int(ref.numel())}
    o = out.double() if out.is_floating_point() else out
    r = ref.double() if ref.is_floating_point() else ref
    if not ref.is_floating_point():
        bad = o != r
    else:
        finite_ref = torch.isfinite(r)
        diff = (o - r).abs()
        tol = atol + rtol * r.abs()
        bad = ~(diff <= tol)
        # Non-finite values must match exactly (same inf, NaN where the reference has NaN).
        same_nonfinite = (~finite_ref) & ((o == r) | (torch.isnan(o) & torch.isnan(r)))
        bad = bad & ~same_nonfinite
        finite_both = finite_ref & torch.isfinite(o)
        d = torch.where(finite_both, diff, torch.zeros_like(diff))
        facts["max_abs_err"] = float(d.max()) if d.numel() else 0.0
        rel = d / r.abs().clamp_min(1e-12)
        facts["max_rel_err"] = float(torch.where(finite_both, rel, torch.zeros_like(rel)).max()) if d.numel() else 0.0
        facts["nonfinite_where_ref_finite"] = int((finite_ref & ~torch.isfinite(o)).sum())
    nbad = int(bad.sum())
    facts["bad_elements"] = nbad
    facts["elements"] = int(bad.numel())
    if nbad:
        flat = int(bad.flatten().nonzero()[0])
        idx = []
        for dim in reversed(ref.shape):
            idx.append(flat % dim)
            flat //= dim
        idx.reverse()
        facts["first_bad_index"] = idx
        at = tuple(idx)
        facts["first_bad_got"] = float(o[at]) if ref.dim() else float(o)
        facts["first_bad_expected"] = float(r[at]) if ref.dim() else float(r)
    return nbad == 0, facts


class Judge:
    def __init__(self, chan):
        self.chan = chan
        self.problems = {}
        self.device = "cpu"
        self.shm_dir = None
        self.exporter = None

    # ---- ops ---------------------------------------------------------------------------
    def op_hello(self, msg):
        self.device = msg.get("device", "cpu")
        self.shm_dir = tempfile.mkdtemp(prefix="kforge-judge-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        os.chmod(self.shm_dir, 0o755)
        dev = torch.device(self.device)
        info = {"ok": True, "torch": torch.__version__, "python": sys.version.split()[0],
                "compile_available": hasattr(torch, "compile"), "shm_dir": self.shm_dir}
        if dev.type == "cuda":
            if not torch.cuda.is_available():
                return {"ok": False, "message": "no CUDA device is visible to PyTorch"}
            torch.cuda.set_device(dev)
            # The reference runs in full fp32: TF32 would make it less exact than an honest
            # kernel and turn correct answers into mismatches.
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            p = torch.cuda.get_device_properties(dev)
            info.update({"device_name": p.name, "capability": "%d.%d" % (p.major, p.minor),
                         "memory_bytes": p.total_memory,
                         "multiprocessors": p.multi_processor_count,
                         "l2_bytes": getattr(p, "L2_cache_size", 0)})
        else:
            info.update({"device_name": _cpu_name()})
        self.exporter = transport.Exporter(self.device, self.shm_dir)
        return info

    def op_native(self, msg):
        global native
        native = load_extension(msg["path"], msg["module_name"])
        return {"ok": True, "has_cuda": bool(native.has_cuda())}

    def op_load_problem(self, msg):
        old = self.problems.pop(msg["id"], None)
        if old is not None:
            old.release()
        p = Problem(msg, self.device, self.exporter)
        self.problems[msg["id"]] = p
        inputs = p.draw(int(msg["init_seed"]) + 1, False)
        refs = p.reference(inputs)
        for i in range(len(p.variants)):
            try:
                p.reference(p.draw(int(msg["init_seed"]) + 2, False, i))
            except Exception as e:
                raise ValueError("the reference fails on KFORGE_SHAPE_VARIANTS[%d] %r: %s"
                                 % (i, p.variants[i], e))
        return {"ok": True, "init_inputs": p.init_inputs,
                "inputs": [_meta(x) for x in inputs], "outputs": [_meta(r) for r in refs],
                "shape_variants": [{k: repr(v) for k, v in d.items()} for d in p.variants]}

    def op_prepare(self, msg):
        p = self.problems[msg["problem"]]
        variant = msg.get("variant")
        inputs = p.draw(int(msg["seed"]), bool(msg.get("signed")),
                        None if variant is None else int(variant))
        refs = p.reference(inputs)
        if msg.get("signed") and not _finite(refs):
            return {"ok": True, "skip": "the reference is not finite on signed inputs"}
        replay_refs = None
        if msg.get("swap_seed"):
            replay_refs = refs
            inputs = swap_some(inputs, msg["swap_seed"])
            refs = p.reference(inputs)
        slot = p.slot(msg["slot"], inputs, refs, replay_refs)
        device_sync(self.device)
        return {"ok": True, "slot": slot.describe()}

    def op_check(self, msg):
        p = self.problems[msg["problem"]]
        slot = p.slots[msg["slot"]]
        device_sync(self.device)
        expected_inputs, refs = slot.pristine, slot.refs
        if msg.get("perturb"):
            # Timed outputs: the last timed call saw the inputs of its own index.
            perturb = msg["perturb"]
            expected_inputs = Perturber(slot.pristine, perturb["seed"]).inputs(int(perturb["index"]))
            refs = p.reference(expected_inputs)
        for i, (buf, orig) in enumerate(zip(slot.in_bufs, expected_inputs)):
            if isinstance(orig, torch.Tensor) and not torch.equal(buf, orig):
                return {"ok": True, "pass": False, "rule": "H09", "code": "input_mutated",
                        "message": "the candidate changed input %d in place" % i}
        results = []
        ok = True
        for i, (buf, ref) in enumerate(zip(slot.out_bufs, refs)):
            dt = transport.dtype_name(ref.dtype)
            atol = float(msg.get("atol", {}).get(dt, TOLERANCE.get(dt, 0.0)))
            rtol = float(msg.get("rtol", {}).get(dt, TOLERANCE.get(dt, 0.0)))
            good, facts = compare(buf, ref, atol, rtol)
            facts.update({"output": i, "atol": atol, "rtol": rtol, "pass": good})
            results.append(facts)
            ok = ok and good
        if not ok and slot.replay_refs is not None and not msg.get("perturb"):
            # Wrong, and exactly the answer to the inputs before a few values were swapped:
            # an answer remembered from an earlier call.
            if all(compare(buf, old, 0.0, 0.0)[0] for buf, old in zip(slot.out_bufs, slot.replay_refs)):
                slot.poison()
                return {"ok": True, "pass": False, "rule": "H06", "code": "replayed",
                        "message": "after a few input values were swapped, the outputs were "
                                   "exactly the answer to the earlier inputs: results are "
                                   "remembered, not computed"}
        slot.poison()
        return {"ok": True, "pass": ok, "outputs": results}

    def op_time(self, msg):
        p = self.problems[msg["problem"]]
        slots = [p.slots[name] for name in msg["slots"]]
        mode = msg["mode"]
        if mode == "noop":
            fn = _noop
        elif mode == "eager":
            fn = p.model
        elif mode == "compile":
            if p.compiled is None and p.compile_error is None:
                if not hasattr(torch, "compile"):
                    p.compile_error = "torch.compile is not available in PyTorch %s" % torch.__version__
                else:
                    p.compiled = torch.compile(p.model)
            if p.compile_error:
                return {"ok": True, "unavailable": p.compile_error}
            fn = p.compiled
        else:
            return {"ok": False, "message": "unknown timing mode %r" % mode}
        arg_sets = [list(s.pristine) for s in slots]
        before = None
        if mode == "noop" and msg.get("perturb_seed"):
            # What an empty call costs when each is given fresh inputs, as candidates are.
            arg_sets = [[x.clone() if isinstance(x, torch.Tensor) else x for x in a] for a in arg_sets]
            perturbers = [Perturber(list(s.pristine), msg["perturb_seed"]) for s in slots]

            def before(slot, index):
                perturbers[slot].apply(arg_sets[slot], index)
        try:
            with torch.no_grad():
                dev_ms, wall_ms, _ = native.run_batch(fn, arg_sets, int(msg["first"]),
                                                      int(msg["iters"]), bool(msg.get("flush", True)),
                                                      torch.device(self.device).type == "cuda",
                                                      before)
        except Exception as e:  # torch.compile failures are reported, not fatal
            if mode == "compile":
                p.compile_error = "torch.compile failed: %s" % str(e).splitlines()[0][:300]
                return {"ok": True, "unavailable": p.compile_error}
            raise
        return {"ok": True, "device_ms": list(dev_ms), "wall_ms": list(wall_ms)}

    def op_release(self, msg):
        p = self.problems.pop(msg["problem"], None)
        if p is not None:
            p.release()
        return {"ok": True}

    def serve(self):
        while True:
            try:
                msg = self.chan.recv()
            except EOFError:
                break
            op = msg.get("op")
            if op == "exit":
                break
            handler = getattr(self, "op_" + str(op), None)
            if handler is None:
                self.chan.send({"ok": False, "message": "unknown op %r" % op})
                continue
            try:
                reply = handler(msg)
            except Exception as e:
                reply = {"ok": False, "message": "%s: %s" % (type(e).__name__, e),
                         "traceback": traceback.format_exc()[-4000:]}
            self.chan.send(reply)
        for p in self.problems.values():
            p.release()
        if self.shm_dir:
            try:
                os.rmdir(self.shm_dir)
            except OSError:
                pass


def _noop(*args):
    return None


def _meta(x):
    if isinstance(x, torch.Tensor):
        return {"shape": list(x.shape), "dtype": transport.dtype_name(x.dtype),
                "stride": list(x.stride()), "device": str(x.device)}
    return {"value": repr(x)}


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


def main():
    chan = Channel(parse_fd())
    Judge(chan).serve()


if __name__ == "__main__":
    main()
