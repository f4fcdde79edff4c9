"""The candidate host: runs one untrusted candidate in a process forked from the zygote.

It answers the supervisor only: `load` (import the candidate, build ModelNew), `call` (one
correctness call on shared input buffers, outputs copied into the judge's buffers), `time` (a
batch of timed calls through the compiled helper) and `emit` (copy the timed calls' last
outputs out for checking). load_inline is replaced by a request to the supervisor, which
builds (or finds in its cache) exactly the extension torch would have built. For a Triton
candidate (`load` with family "triton") Triton is hooked first (triton_hooks.py): launches
counted, compile time and errors recorded, and in the ghost replay every launch a no-op.
"""
import gc
import linecache
import os
import sys
import time
import traceback

import torch

from . import guard, protocol, sandbox, state, transport, triton_hooks
from .channel import Channel
from .common import Perturber, as_list, device_sync, load_extension, redirect_output

native = None
CANDIDATE_FILE = "candidate.py"
PROBLEM_FILE = "problem.py"  # the problem module's code, run first in the same namespace


def preload_native(path, module_name):
    global native
    native = load_extension(path, module_name)


class CandidateError(Exception):
    """A failure to report with a kind the supervisor maps to a status."""

    def __init__(self, kind, message, **extra):
        super().__init__(message)
        self.kind = kind
        self.extra = extra


def _candidate_line(tb):
    """The last line of the candidate's own file in a traceback, or 0."""
    line = 0
    for frame in traceback.extract_tb(tb):
        if frame.filename == CANDIDATE_FILE:
            line = frame.lineno or 0
    return line


def _precision_switches():
    """PyTorch's switches that make fp32 matmuls and convolutions use TF32 or bf16."""
    switches = [("torch.backends.cuda.matmul.allow_tf32", torch.backends.cuda.matmul.allow_tf32),
                ("torch.backends.cudnn.allow_tf32", torch.backends.cudnn.allow_tf32)]
    if hasattr(torch, "get_float32_matmul_precision"):
        precision = torch.get_float32_matmul_precision()
        switches.append(("torch.set_float32_matmul_precision(%r)" % precision,
                         precision != "highest"))
    return switches


def _traced(fn, watch):
    """Runs fn() with the candidate's own frames traced: (result, evidence), where evidence says
    which lines of `watch` (its except/finally blocks) ran and whether an exception passed
    through its code. The supervisor decides what that means (H03). Only frames of the
    candidate's file get a line tracer, so library code runs at nearly full speed."""
    hit, raised = set(), [False]

    def local(frame, event, arg):
        if event == "line" and frame.f_lineno in watch:
            hit.add(frame.f_lineno)
        elif event == "exception":
            raised[0] = True
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_filename == CANDIDATE_FILE else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        out = fn()
    finally:
        sys.settrace(previous)
    return out, {"lines": sorted(hit), "raised": raised[0]}


def _error_reply(e):
    if isinstance(e, CandidateError):
        reply = {"ok": False, "kind": e.kind, "message": str(e)}
        reply.update(e.extra)
        return reply
    text = "%s: %s" % (type(e).__name__, e)
    kind = "cuda_error" if "CUDA error" in text or "cudaError" in text else "exception"
    tb = traceback.format_exception(type(e), e, e.__traceback__)
    return {"ok": False, "kind": kind, "message": text[:4000],
            "line": _candidate_line(e.__traceback__), "traceback": "".join(tb)[-4000:]}


class Host:
    def __init__(self, chan, spawn):
        self.chan = chan
        self.device = torch.device(spawn.get("device", "cpu"))
        self.model = None
        self.opened = {}  # slot name -> (inputs, outputs) tensors
        self.timed_last = {}  # slot name -> last outputs of timed calls
        self.perturbers = {}  # slot name -> Perturber over the slot's inputs as first timed
        self.build_failed = None
        self.sandbox = "unavailable: not entered"
        self.sandbox_error = None  # set: the confinement failed, so no candidate code may run
        # Captured before any candidate code runs: rebinding the module attribute later
        # cannot change what times the candidate.
        self.run_batch = native.run_batch if native is not None else None
        self.ext_state = {"calls": 0, "ablate": False}
        self.jit = None  # triton_hooks.State for a Triton candidate
        self.watch = frozenset()  # lines of the candidate's except/finally blocks (load's "watch")
        self.load_phases = {}  # where the load's time went, ms by phase (op_load's phases_ms)
        self.started = None  # perf_counter() when this process began (main), for host_start

    # load_inline as the candidate sees it
    def load_inline(self, name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None,
                    extra_cuda_cflags=None, extra_ldflags=None, extra_include_paths=None,
                    build_directory=None, verbose=False, with_cuda=None, is_python_module=True,
                    with_pytorch_error_handling=True, keep_intermediates=True, use_pch=False):
        if not is_python_module:
            raise CandidateError("unsupported", "load_inline(is_python_module=False) is not supported")
        args = {"name": name, "cpp_sources": cpp_sources, "cuda_sources": cuda_sources,
                "functions": functions, "extra_cflags": extra_cflags,
                "extra_cuda_cflags": extra_cuda_cflags, "extra_ldflags": extra_ldflags,
                "extra_include_paths": extra_include_paths, "with_cuda": with_cuda,
                "with_pytorch_error_handling": with_pytorch_error_handling}
        t0 = time.perf_counter()
        reply, why = protocol.send_event(self.chan, "candidate", "load_inline", {"args": args})
        t1 = time.perf_counter()
        self._phase("extension_wait", t1 - t0)
        if why is not None:
            raise CandidateError("internal", why)
        if not reply.get("ok"):
            self.build_failed = reply.get("message", "build failed")
            raise RuntimeError("Error building extension '%s': %s" % (name, self.build_failed))
        module = load_extension(reply["so_path"], reply["module_name"])
        self._phase("extension_load", time.perf_counter() - t1)
        return guard.ExtensionProxy(module, self.ext_state)

    def _phase(self, name, seconds):
        self.load_phases[name] = self.load_phases.get(name, 0.0) + seconds * 1000.0

    def _poison_allocator(self, outputs):
        """Leaves NaN-filled blocks of the outputs' sizes in PyTorch's CUDA caching allocator, so
        an output the candidate allocates and never writes holds NaN, not leftovers (H05)."""
        if self.device.type != "cuda":
            return  # large CPU allocations are fresh zeroed pages from the OS
        blocks = []
        for d in outputs:
            dtype = transport.DTYPES.get(d.get("dtype", ""))
            if dtype is None:
                continue
            for _ in range(2):
                t = torch.empty(d["shape"], dtype=dtype, device=self.device)
                transport.poison(t)
                blocks.append(t)
        device_sync(self.device)
        del blocks  # back to the caching allocator, still poisoned

    def _hook_triton(self):
        """Installs the Triton hooks before any candidate code runs; a Python without triton
        cannot judge a Triton candidate (the supervisor's infra_error)."""
        state = triton_hooks.State()
        try:
            triton_hooks.install(state)
        except ImportError as e:
            raise CandidateError("internal", "this Python has no usable triton package (%s): "
                                 "a Triton candidate cannot be judged with it; run kforge with "
                                 "--python naming an interpreter that has triton" % e)
        self.jit = state

    def _jit_facts(self, reply, launches_before=None):
        if self.jit is not None:
            reply["jit"] = self.jit.report()
            if launches_before is not None:
                reply["triton_launches"] = self.jit.launches - launches_before
        return reply

    def op_load(self, msg):
        """Where a load's time goes is in its reply's `phases_ms`: host_start (from this
        process's start to the load request: the sandbox entered, the host made; on a GPU,
        CUDA initialised by main()'s set_device: 327 ms of 346 on an H100), device_start
        (the poisoned allocator blocks),
        extension_wait (load_inline's requests to the supervisor: a cached artifact found, or a
        run-time build), extension_load (the modules imported), code (the problem's and the
        candidate's module code but those), model (ModelNew built) and to_device (moved, and
        the device synchronised)."""
        import torch.utils.cpp_extension as ce
        self.load_phases = {}
        t = time.perf_counter()
        if self.started is not None:
            self._phase("host_start", t - self.started)
        self._poison_allocator(msg.get("poison", []))
        t = self._lap("device_start", t)
        if msg.get("family") == "triton":
            self._hook_triton()
        ce.load_inline = self.load_inline
        code = msg["code"]
        # Watched during calls only: a guard that catches a failed build at import leaves the
        # kernel absent, which the extension-use rules (H02) see.
        self.watch = frozenset(line for first, last in msg.get("watch", [])
                               for line in range(int(first), int(last) + 1))
        try:
            compiled = compile(code, CANDIDATE_FILE, "exec", dont_inherit=True)
        except SyntaxError as e:
            raise CandidateError("syntax_error", "SyntaxError: %s" % e.msg, line=e.lineno or 0,
                                 col=e.offset or 0)
        if self.jit is not None:
            # Triton reads a kernel's source with inspect (there is no file: the candidate
            # came as text); linecache keeps an entry without a modification time for good.
            linecache.cache[CANDIDATE_FILE] = (len(code), None, code.splitlines(True),
                                               CANDIDATE_FILE)
        module = type(sys)("candidate")
        module.__file__ = CANDIDATE_FILE
        sys.modules["candidate"] = module
        self._problem_names(msg.get("problem_code") or "", module.__dict__)
        exec(compiled, module.__dict__)
        t = self._lap("code", t, less=("extension_wait", "extension_load"))
        cls = module.__dict__.get("ModelNew")
        if not isinstance(cls, type):
            raise CandidateError("no_model_new", "the candidate defines no class ModelNew")
        torch.set_grad_enabled(False)
        # Same seed as the judge's Model: layers created in the same order get the same weights.
        torch.manual_seed(int(msg["init_seed"]))
        model = cls(*msg.get("init_inputs", []))
        t = self._lap("model", t)
        if isinstance(model, torch.nn.Module):
            model = model.to(self.device)
        if msg.get("stateful"):
            # The problem's model keeps state between calls: the judge starts every call of it
            # from the state it was built with, and so does the candidate's (state.py).
            state.keep_initial_state(model, state.snapshot(model))
        self.model = model
        device_sync(self.device)
        self._lap("to_device", t)
        return self._jit_facts({"ok": True, "sandbox": self.sandbox,
                                "phases_ms": {k: round(v, 3) for k, v in self.load_phases.items()}})

    def _lap(self, name, since, less=()):
        """Records the time since `since` as phase `name` (less the phases named in `less`
        that ran inside it); returns now."""
        now = time.perf_counter()
        inside = sum(self.load_phases.get(k, 0.0) for k in less)
        self._phase(name, now - since - inside / 1000.0)
        return now

    @staticmethod
    def _problem_names(source, namespace):
        """The problem module's names, before the candidate's own: KernelBench's harness execs
        the problem and the candidate into one dict, so model-written candidates use the
        problem's constants (batch_size, ...) without defining them. Problem code is trusted;
        it runs here inside the candidate's sandbox, never with the expected outputs. A problem
        that does not run here adds nothing, and the candidate is judged on its own names."""
        if not source:
            return
        names = {"__name__": "problem"}
        try:
            exec(compile(source, PROBLEM_FILE, "exec", dont_inherit=True), names)
        except Exception:  # noqa: BLE001 - the candidate must not fail for the problem's sake
            return
        namespace.update({k: v for k, v in names.items() if not k.startswith("__")})

    def _open(self, name, desc):
        got = self.opened.get(name)
        if got is not None and got[0] == desc:
            return got[1], got[2]
        inputs = [transport.open_buffer(d["tensor"], native) if "tensor" in d else d["value"]
                  for d in desc["inputs"]]
        outputs = [transport.open_buffer(d, native) for d in desc["outputs"]]
        self.opened[name] = (desc, inputs, outputs)
        return inputs, outputs

    def _deliver(self, out, inputs, outputs):
        """Check the forward's result and copy it into the judge's output buffers."""
        values = as_list(out)
        if len(values) != len(outputs):
            raise CandidateError("wrong_output", "ModelNew returned %d outputs; the reference "
                                 "returns %d" % (len(values), len(outputs)), rule="count")
        storages = set()
        for x in inputs:
            if isinstance(x, torch.Tensor):
                storages.add(x.untyped_storage().data_ptr() if hasattr(x, "untyped_storage")
                             else x.storage().data_ptr())
        meta = []
        for i, (v, buf) in enumerate(zip(values, outputs)):
            if type(v) is not torch.Tensor:
                raise CandidateError("wrong_output", "output %d is a %s, not a torch.Tensor"
                                     % (i, type(v).__name__), rule="H14")
            if list(v.shape) != list(buf.shape):
                raise CandidateError("wrong_output", "output %d has shape %s; expected %s"
                                     % (i, list(v.shape), list(buf.shape)), rule="shape")
            if v.dtype != buf.dtype:
                raise CandidateError("wrong_output", "output %d has dtype %s; expected %s"
                                     % (i, transport.dtype_name(v.dtype),
                                        transport.dtype_name(buf.dtype)), rule="dtype")
            if v.device != buf.device:
                raise CandidateError("wrong_output", "output %d is on %s; expected %s"
                                     % (i, v.device, buf.device), rule="device")
            sp = v.untyped_storage().data_ptr() if hasattr(v, "untyped_storage") else v.storage().data_ptr()
            if sp in storages and v.numel() > 0:
                raise CandidateError("cheat", "output %d shares memory with an input" % i,
                                     rule="H10")
            buf.copy_(v)
            meta.append({"shape": list(v.shape), "dtype": transport.dtype_name(v.dtype)})
        device_sync(self.device)
        return meta

    def _check_precision(self, outputs):
        """H13 from what ran: fp32 outputs must come from fp32 arithmetic, so the TF32 switches
        the host turned off before any candidate code ran must still be off."""
        if self.device.type != "cuda" or not any(o.dtype == torch.float32 for o in outputs):
            return
        on = [name for name, value in _precision_switches() if value]
        if on:
            raise CandidateError("cheat", "the candidate turned on reduced-precision fp32 "
                                 "arithmetic (%s) for a float32 problem" % ", ".join(on),
                                 rule="H13")

    def op_call(self, msg):
        inputs, outputs = self._open(msg["slot"], msg["buffers"])
        ablate = bool(msg.get("ablate"))
        if self.jit is not None:
            # The ghost replay: the Triton family's own kernels become no-ops (an extension it
            # may also load is not its kernel: it keeps running). What the launches would have
            # written stays the allocator's poison.
            self.jit.ghost = ablate
            if ablate:
                self._poison_allocator([{"shape": list(o.shape), "dtype": transport.dtype_name(o.dtype)}
                                        for o in outputs])
            ablate = False
        self.ext_state["ablate"] = ablate
        calls_before = self.ext_state["calls"]
        launches_before = self.jit.launches if self.jit is not None else None
        facts, evidence = None, {}

        def forward():
            if not self.watch:
                return self.model(*inputs)
            out, found = _traced(lambda: self.model(*inputs), self.watch)
            evidence.update(found)
            return out
        try:
            if msg.get("profile"):
                out, facts = guard.profile(forward, self.device.type == "cuda")
            else:
                out = forward()
            device_sync(self.device)
        finally:
            self.ext_state["ablate"] = False
            if self.jit is not None:
                self.jit.ghost = False
        self._check_precision(outputs)
        reply = {"ok": True, "outputs": self._deliver(out, inputs, outputs),
                 "extension_calls": self.ext_state["calls"] - calls_before}
        self._jit_facts(reply, launches_before)
        if facts is not None:
            reply["profile"] = facts
        if evidence:
            reply["guards"] = evidence
        return reply

    def op_time(self, msg):
        names = msg["slots"]
        sets = [self._open(n, d)[0] for n, d in zip(names, msg["buffers"])]
        before = None
        seed = int(msg.get("perturb_seed", 0))
        if seed:
            # The judge's pristine inputs, copied before any timed call could touch them.
            perturbers = []
            for n, inputs in zip(names, sets):
                if n not in self.perturbers:
                    base = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
                    self.perturbers[n] = Perturber(base, seed)
                perturbers.append(self.perturbers[n])

            def before(slot, index):
                perturbers[slot].apply(sets[slot], index)
        first, iters = int(msg["first"]), int(msg["iters"])
        # The sets this batch calls get new last outputs: their old ones are not kept beside.
        for k in range(min(iters, len(names))):
            self.timed_last.pop(names[(first + k) % len(names)], None)
        dev_ms, wall_ms, last, host_ms, hidden = self.run_batch(
            self.model, sets, first, iters, True,
            self.device.type == "cuda", before, float(msg.get("delay_us", 0)))
        for n, out in zip(names, last):
            if out is not None:
                self.timed_last[n] = out
        return self._jit_facts({"ok": True, "device_ms": list(dev_ms), "wall_ms": list(wall_ms),
                                "host_ms": list(host_ms), "hidden": int(hidden)})

    def op_memory(self, msg):
        """The most memory this process held on its device (bytes): the caching allocator's
        peak on a GPU, the resident set's on the CPU."""
        if self.device.type == "cuda":
            return {"ok": True, "peak_bytes": int(torch.cuda.max_memory_allocated(self.device))}
        import resource
        return {"ok": True, "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}

    def op_release(self, msg):
        """Lets go of every slot but those named in `keep`: its mapped buffers, the copy of its
        inputs that fresh inputs are made from, its last timed outputs. The judge frees those
        buffers next, and memory this process still maps would stay taken until it exits."""
        keep = set(msg["keep"])
        for held in (self.opened, self.perturbers, self.timed_last):
            for name in [n for n in held if n not in keep]:
                del held[name]
        gc.collect()  # a tensor in a reference cycle would keep its mapping
        return {"ok": True}

    def op_emit(self, msg):
        name = msg["slot"]
        if name not in self.timed_last:
            raise CandidateError("internal", "no timed output for slot %s" % name)
        inputs, outputs = self._open(name, msg["buffers"])
        self._check_precision(outputs)
        return {"ok": True, "outputs": self._deliver(self.timed_last[name], inputs, outputs)}

    def serve(self):
        while True:
            try:
                msg = self.chan.recv()
            except EOFError:
                return 0
            op = msg.get("op")
            if op == "exit":
                return 0
            why = protocol.check_request("candidate", msg)
            if why is not None:
                self.chan.send(protocol.error_reply("candidate", why))
                continue
            handler = getattr(self, "op_" + op)
            if self.jit is not None:
                self.jit.compile_error = None
            try:
                if self.sandbox_error is not None:
                    raise CandidateError("internal", self.sandbox_error)
                reply = handler(msg)
            except BaseException as e:  # the candidate may raise anything, SystemExit included
                reply = _error_reply(e)
                if self.build_failed is not None:
                    reply = {"ok": False, "kind": "build_failed", "message": self.build_failed}
                elif self.jit is not None and self.jit.compile_error is not None:
                    # Triton's compiler failed in this op: the candidate's compile error.
                    kernel, text = self.jit.compile_error
                    reply = self._jit_facts({"ok": False, "kind": "jit_compile_error",
                                             "kernel": kernel, "message": text[:6000]})
            self.chan.send(protocol.checked("candidate", op, reply))


def main(fd, spawn):
    started = time.perf_counter()
    workdir = spawn.get("workdir")
    if workdir:
        os.chdir(workdir)
        redirect_output(os.path.join(workdir, "output.log"))
    # A Triton candidate's compiler cache: the one folder outside its own it may write.
    state, error = sandbox.confine(workdir, spawn.get("jit_cache"))
    chan = Channel(fd)
    host = Host(chan, spawn)
    host.sandbox, host.sandbox_error = state, error
    host.started = started
    if error is None and host.device.type == "cuda":
        torch.cuda.set_device(host.device)
        # The judge computes references in full fp32 (no TF32); PyTorch compute the candidate
        # keeps (allowed under the kernelbench policy) must too, or an honest conv fails 1e-4.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    return host.serve()
