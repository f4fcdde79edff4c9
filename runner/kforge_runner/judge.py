"""The judge: the trusted process of an execution lane.

It loads problems, draws inputs on the device, computes and keeps the reference outputs, lays
inputs into shared buffers for the candidate, compares what the candidate wrote back, and times
the reference (eager and torch.compile) with the same compiled helper the candidate is timed
with. Expected outputs never leave this process.

This file is the process: the requests it answers (op_<name>, as runner/protocol.json lists
them) and the loop that serves them. Its parts: problem.py (a problem's model, its inputs and
their contract, the reference), slots.py (the memory it plans with and the shared buffers a
trial runs on), check.py (a trial's inputs and outputs against the reference), timing.py (the
reference's and the empty calls' timed calls), lending.py (the buffers lent to a confined
judge).

The confined judge of an untrusted problem is this class too (`main_confined`), but it makes no
shared buffer: it borrows each from the trusted judge, which lends it (`op_lend`) and frees it
when it is given back or the confined judge stops (`op_reclaim`); kforge carries the events.
"""
import os
import sys
import tempfile
import traceback

import torch

from . import check, contract, lending, protocol, sandbox, timing, transport
from .channel import Channel
from .common import device_sync, load_extension, parse_fd, redirect_output
from .problem import Problem
from .slots import Memory, tensor_bytes

native = None

# Loaded problems' models (parameters and buffers) together stay under this share; the least
# recently used are set aside and loaded again when next asked for.
MODELS_SHARE = 1 / 8


class Judge:
    def __init__(self, chan, refusal=None):
        self.chan = chan
        # Set: this judge may not run problem code (an untrusted problem's judge that could not
        # be confined); every op is answered with this message.
        self.refusal = refusal
        self.sandbox = "none: the trusted judge"  # what confines this judge, for hello
        self.problems = {}  # by id, least recently used first
        self.dormant = {}  # id -> load message of a problem whose model was set aside
        self.device = "cpu"
        self.shm_dir = None
        self.exporter = None
        self.memory = None
        # The confined judge borrows its shared buffers from the trusted judge (through kforge)
        # instead of making them (transport.Borrower); the trusted judge keeps what it lent.
        self.borrows = False
        self.in_op = False  # answering a request: kforge reads events until the reply
        self.lender = lending.Lender()  # what the trusted judge lent

    # ---- ops ---------------------------------------------------------------------------
    def op_hello(self, msg):
        self.device = msg.get("device", "cpu")
        if not self.borrows:  # a borrowing (confined) judge makes no buffers of its own
            self.shm_dir = tempfile.mkdtemp(prefix="kforge-judge-",
                                            dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
            os.chmod(self.shm_dir, 0o755)
        dev = torch.device(self.device)
        info = {"ok": True, "protocol": protocol.VERSION, "torch": torch.__version__,
                "python": sys.version.split()[0], "sandbox": self.sandbox,
                "compile_available": hasattr(torch, "compile"), "shm_dir": self.shm_dir or ""}
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
        if self.borrows:
            self.exporter = transport.Borrower(self.device, self.ask)
        else:
            self.exporter = transport.Exporter(self.device, self.shm_dir)
        self.memory = Memory(self.device, self.exporter)
        return info

    def op_native(self, msg):
        global native
        native = load_extension(msg["path"], msg["module_name"])
        self.exporter.native = native
        if not self.memory.cuda():
            # The helper's cache-flush buffer (twice the last-level cache) is made once, on its
            # first timed call: made now, it counts as start-up memory, not as the trials'. Its
            # GPU counterpart is twice the L2, a thousandth of a device.
            native.run_batch(timing.noop, [[]], 0, 1, True, False, None, 0.0)
            self.memory.rebase()
        return {"ok": True, "has_cuda": bool(native.has_cuda())}

    def problem(self, pid):
        """A loaded problem; the others' trial buffers are released first, so one problem's
        slots at most are resident (a bench warms many problems on one lane). A problem whose
        model was set aside to make room is loaded again (its parameters come from its seed)."""
        if pid not in self.problems and pid in self.dormant:
            self._load(self.dormant.pop(pid))
        p = self.problems.pop(pid)
        self.problems[pid] = p  # most recently used last
        for other in self.problems.values():
            if other is not p and other.slots:
                other.release()
        return p

    def _load(self, msg):
        """Loads a problem's model, setting aside the least recently used others' while all of
        theirs together would take more than MODELS_SHARE of the memory the judge plans with."""
        p = Problem(msg, self.device, self.exporter, self.memory)
        budget = MODELS_SHARE * self.memory.plan_bytes()
        while budget and self.problems and \
                sum(q.model_bytes for q in self.problems.values()) + p.model_bytes > budget:
            old_id = next(iter(self.problems))
            old = self.problems.pop(old_id)
            old.release()
            self.dormant[old_id] = old.msg
        self.problems[msg["id"]] = p
        return p

    def op_load_problem(self, msg):
        old = self.problems.pop(msg["id"], None)
        if old is not None:
            old.release()
        self.dormant.pop(msg["id"], None)
        self.problem_slots_released()
        p = self._load(msg)
        inputs = p.draw(int(msg["init_seed"]) + 1, False)
        in_meta, in_bytes = [_meta(x) for x in inputs], tensor_bytes(inputs)
        first_facts = contract.facts_of(inputs)  # small: samples only
        refs = p.reference(inputs, copy=False)
        out_meta, out_bytes = [_meta(r) for r in refs], tensor_bytes(refs)
        del inputs, refs
        stateful = p.find_state(int(msg["init_seed"]) + 1)
        p.contract(first_facts=first_facts)  # its other draws one at a time, this one freed
        p.check_variants()
        self.memory.settle()
        reply = {"ok": True, "init_inputs": p.init_inputs, "inputs": in_meta, "outputs": out_meta,
                 "shape_variants": [{k: repr(v) for k, v in d.items()} for d in p.variants],
                 "memory": {"input_bytes": in_bytes, "output_bytes": out_bytes,
                            "free_bytes": self.memory.free_bytes(),
                            "plan_bytes": self.memory.plan_bytes()}}
        if stateful:
            reply["stateful"] = stateful
        return reply

    def problem_slots_released(self):
        for other in self.problems.values():
            other.release()

    def op_release_slots(self, msg):
        """Trial buffers handed back. With `problem`: its slots but those named in `keep` (a big
        problem's phase is over, and the next one's slots need the room). Without: every
        problem's (another process is about to use the device: the confined judge of an
        untrusted problem)."""
        if msg.get("problem") is not None:
            p = self.problems.get(msg["problem"])
            if p is not None:
                p.release(keep=set(msg.get("keep", [])))
            return {"ok": True}
        self.problem_slots_released()
        if self.memory is not None and self.memory.cuda():
            torch.cuda.empty_cache()
        return {"ok": True}

    def op_prepare(self, msg):
        p = self.problem(msg["problem"])
        # Variant 0 is a variant: keep every key that is present, falsy or not.
        recipe = {k: msg[k] for k in ("signed", "variant", "swap_seed") if msg.get(k) is not None}
        recipe["seed"] = int(msg["seed"])
        if msg.get("signed"):
            why = p.signed_skip()
            if why is not None:
                return {"ok": True, "skip": why}
        slot, skip = p.prepare(msg["slot"], recipe, finite_only=bool(msg.get("signed")))
        if skip is not None:
            return {"ok": True, "skip": skip}
        device_sync(self.device)
        self.memory.settle()
        return {"ok": True, "slot": slot.describe()}

    def op_memory(self, msg):
        """The judge's peak device memory since the last ask (bytes); resets the peak."""
        if self.memory.cuda():
            self.memory.note_peak()
            torch.cuda.reset_peak_memory_stats(self.memory.device)
        peak = self.memory.peak
        self.memory.peak = self.memory.now()
        return {"ok": True, "peak_bytes": int(peak), "free_bytes": self.memory.free_bytes()}

    def op_check(self, msg):
        p = self.problem(msg["problem"])
        slot = p.slots[msg["slot"]]
        device_sync(self.device)
        reply = check.check_trial(p, slot, msg)
        slot.poison()
        self.memory.settle()
        return reply

    def op_time(self, msg):
        p = self.problem(msg["problem"])
        slots = [p.slots[name] for name in msg["slots"]]
        return timing.time_calls(native, p, slots, msg, self.device, self.memory)

    def op_gpu_state(self, msg):
        """The GPU's clocks, temperature, power and throttle reasons now (NVML), recorded
        around a candidate's timing so a disturbed measurement shows."""
        dev = torch.device(self.device)
        if dev.type != "cuda" or native is None or not hasattr(native, "gpu_state"):
            return {"ok": True, "state": {}}
        return {"ok": True, "state": dict(native.gpu_state(dev.index or 0))}

    def op_release(self, msg):
        self.dormant.pop(msg["problem"], None)
        p = self.problems.pop(msg["problem"], None)
        if p is not None:
            p.release()
        return {"ok": True}

    def op_lend(self, msg):
        """A shared buffer for the confined judge (its borrow event): made and kept here."""
        if self.borrows:
            return {"ok": False, "message": "a confined judge lends nothing"}
        return self.lender.lend(self.exporter, self.memory, msg)

    def op_reclaim(self, msg):
        return self.lender.reclaim(self.exporter, msg.get("ids"))

    def ask(self, event, fields):
        """Sends an event to kforge and returns its answer (the confined judge's borrowing).
        Outside a request nobody reads events: a buffer given back then is reclaimed by kforge
        when it stops this judge."""
        if not self.in_op:
            if event == "give_back":
                return {"ok": True}
            raise RuntimeError("the %s event is only sent while answering a request" % event)
        reply, why = protocol.send_event(self.chan, "judge", event, fields)
        if why is not None:
            raise RuntimeError(why)
        if not reply.get("ok"):
            raise RuntimeError("kforge could not %s a buffer: %s" % (
                "lend" if event == "borrow" else "take back", reply.get("message", "?")))
        return reply

    def _log_memory(self, msg, peak):
        """$KFORGE_JUDGE_MEMORY_LOG: a line per request with its peak and what is held after it
        (docs/PROTOCOL.md, "Memory", was measured with it)."""
        path = os.environ.get("KFORGE_JUDGE_MEMORY_LOG")
        if not path or self.borrows:  # a confined judge may write nothing outside its folder
            return
        slots = msg.get("slot") or ",".join(msg.get("slots", []))
        with open(path, "a") as f:
            f.write("%-12s %-10s %-8s peak %9.1f MiB  held after %9.1f MiB\n"
                    % (msg.get("op"), slots, msg.get("mode", ""), peak / 2**20,
                       self.memory.now() / 2**20))

    def serve(self):
        while True:
            try:
                msg = self.chan.recv()
            except EOFError:
                break
            op = msg.get("op")
            if op == "exit":
                break
            why = protocol.check_request("judge", msg)
            if why is not None:
                self.chan.send(protocol.error_reply("judge", why))
                continue
            if self.refusal is not None:
                self.chan.send({"ok": False, "message": self.refusal})
                continue
            memory = self.memory  # None until hello
            self.in_op = True
            try:
                if memory is not None:
                    memory.begin()
                reply = getattr(self, "op_" + op)(msg)
                if memory is not None:
                    self._log_memory(msg, memory.end())
            except Exception as e:
                reply = {"ok": False, "message": "%s: %s" % (type(e).__name__, e),
                         "traceback": traceback.format_exc()[-4000:]}
                if memory is not None:
                    _fold_failed_peak(memory)
            self.in_op = False
            self.chan.send(protocol.checked("judge", op, reply))
        for p in self.problems.values():
            p.release()
        self.op_reclaim({})
        if self.shm_dir:
            try:
                os.rmdir(self.shm_dir)
            except OSError:
                pass


def _fold_failed_peak(memory):
    """A failed request's peak counts too (an out-of-memory's above all); reading it must not
    fail the reply."""
    try:
        memory.end(enforce=False)
    except Exception:  # noqa: BLE001 - a device that errs: the reply says what failed
        pass


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


def main_confined(fd, spawn):
    """The judge of one untrusted problem (its text came with a request): forked from the
    zygote like a candidate host and confined with the same limits before the problem's code
    is imported. Where the sandbox cannot be entered it runs nothing and says why."""
    workdir = spawn["workdir"]
    os.chdir(workdir)
    redirect_output(os.path.join(workdir, "output.log"))
    state, error = sandbox.confine(workdir)
    refusal = None
    if error is not None:
        refusal = "the untrusted problem's sandbox failed: %s" % error
    elif not state.startswith("on"):
        refusal = "an untrusted problem runs only confined, and the sandbox is %s" % state
    j = Judge(Channel(fd), refusal)
    j.sandbox = state
    j.borrows = True
    j.serve()
    return 0


if __name__ == "__main__":
    main()
