"""A problem as the judge holds it: its module and model, the inputs it draws (seeded, signed,
of a shape variant, with a few values swapped), its input contract (contract.py), its reference
outputs, and the slots its trials run on (slots.py).
"""
import importlib.util

import torch

from . import check, contract, state
from .common import as_list, on_device
from .slots import KEEP_SHARE, Slot, tensor_bytes

# The input contract (contract.py) is inferred from this many seeded draws of get_inputs(): the
# load's own draw (seed init_seed + 1) and draws at init_seed + 3, + 4, ... (+ 2 is the shape
# variants' check), one at a time.
CONTRACT_DRAWS = 4


class Problem:
    """One loaded problem; `msg` is its load_problem request (id, path, init_seed, and its input
    contract once inferred), kept to load it again after its model was set aside."""

    def __init__(self, msg, device, exporter, memory):
        self.id = msg["id"]
        self.msg = msg
        self.memory = memory
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
        self.model_bytes = tensor_bytes(list(self.model.parameters())
                                        + list(self.model.buffers()))
        # A model that keeps state between calls (state.py): found once, at the first load, and
        # kept in the load message (names of its state tensors) for a load after a set-aside.
        self.stateful = msg.get("stateful")
        self._held = state.snapshot(self.model) if self.stateful != [] else None
        if self.stateful:
            state.keep_initial_state(self.model, self._held)
        self.compiled = None
        self.compile_error = None
        self.slots = {}
        # The invariants of the problem's inputs (contract.py), kept in the load message so a
        # problem loaded again after being set aside does not draw them again.
        self._contract = msg.get("contract")
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
            with on_device(self.device):
                return list(self.module.get_inputs())
        finally:
            for k, v in saved.items():
                setattr(self.module, k, v)

    def contract(self, first_facts=None):
        """The input contract (contract.py): per input, the invariants every one of
        CONTRACT_DRAWS seeded draws satisfies, drawn one at a time. `first_facts` is what the
        draw at init_seed + 1 showed when the caller has it (the load's own draw, not made
        again)."""
        if self._contract is None:
            facts = []
            for k in range(CONTRACT_DRAWS):
                if k == 0 and first_facts is not None:
                    facts.append(first_facts)
                    continue
                seed = self.init_seed + (1 if k == 0 else k + 2)
                torch.manual_seed(seed)
                inputs = self._get_inputs(None)
                facts.append(contract.facts_of(inputs))
                del inputs
            self._contract = contract.infer_from(facts)
            self.msg["contract"] = self._contract
        return self._contract

    def find_state(self, seed):
        """The names of the tensors this problem's model keeps state in, or [] (state.py). Called
        once, after the model's first call (the load's draw at `seed`): stateful when a tensor
        it holds changed, a call from the state it was built with gives that first call's
        outputs again, and a second call without going back does not (a model whose outputs vary
        by themselves, like dropout, is not stateful: its state is left as it goes). A stateful
        model is put back to its first state before every call from then on."""
        if self.stateful is not None:
            return self.stateful
        held, self._held = self._held, None
        self.stateful = []
        moved = state.changed_names(held)
        if moved:
            def call():
                return state.fingerprint(self.reference(self.draw(seed, False), copy=False))
            state.restore(held)
            first, second = call(), call()
            state.restore(held)
            if call() == first != second:
                self.stateful = moved
                state.keep_initial_state(self.model, held)
        self.msg["stateful"] = self.stateful
        return self.stateful

    def signed_skip(self):
        """Why the signed trial does not run (no input may take signed values), or None."""
        c = self.contract()
        return None if any(contract.can_sign(x) for x in c) else contract.why_unsigned(c)

    def check_variants(self):
        """The reference must run on every shape variant (a draw at init_seed + 2); a
        ValueError names the first it fails on."""
        for i in range(len(self.variants)):
            try:
                self.reference(self.draw(self.init_seed + 2, False, i), copy=False)
            except Exception as e:
                raise ValueError("the reference fails on KFORGE_SHAPE_VARIANTS[%d] %r: %s"
                                 % (i, self.variants[i], e))

    def draw(self, seed, signed, variant=None):
        torch.manual_seed(seed)
        inputs = self._get_inputs(variant)
        inputs = [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in inputs]
        if signed:
            # Values of both signs where the problem's contract allows them: catches kernels
            # that only work on part of the inputs the problem can produce. Inputs that are
            # non-negative (integral, ...) in every draw keep this fresh draw's own values.
            signed_inputs = contract.signed(inputs, self.contract())
            if signed_inputs is not None:
                inputs = signed_inputs
        return inputs

    def inputs_of(self, recipe):
        """The inputs a recipe names: a seeded draw, signed or of a shape variant, with a few
        values swapped for a swapped trial. The same recipe gives the same inputs again."""
        variant = recipe.get("variant")
        inputs = self.draw(int(recipe["seed"]), bool(recipe.get("signed")),
                           None if variant is None else int(variant))
        if recipe.get("swap_seed"):
            inputs = contract.swap_some(inputs, recipe["swap_seed"], self.contract())
        return inputs

    def reference(self, inputs, copy=True):
        """The reference outputs; on copies of the inputs unless `copy` is False (the caller
        then no longer needs them as they were: a reference may write into its inputs)."""
        copies = [x.clone() if copy and isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            refs = as_list(self.model(*copies))
        for r in refs:
            if not isinstance(r, torch.Tensor):
                raise ValueError("the reference returned a %s, not a tensor" % type(r).__name__)
        return [r.detach().clone() if copy else r.detach() for r in refs]

    def prepare(self, name, recipe, finite_only=False):
        """Slot `name` ready for a trial: the inputs `recipe` names laid into its buffers, its
        output buffers poisoned, and its pristine inputs and reference outputs kept beside them
        when they take at most KEEP_SHARE of the memory the judge plans with (else its check
        draws the inputs again and runs the reference then). Returns (slot, None), or (None,
        why) when `finite_only` and the reference is not finite on these inputs.

        The inputs go into the buffers first, so the reference runs on the drawn tensors
        themselves: a set of inputs T bytes and outputs U bytes takes at most the buffers
        (T + U), the draw (T) and the reference's outputs (U) at once, no copies."""
        slot = self.slots.get(name)
        if slot is None:
            slot = self.slots[name] = Slot(self.exporter, self.memory)
        slot.drop()  # its kept copies are stale: room for this draw
        inputs = self.inputs_of(recipe)
        slot.lay(inputs)
        # The buffers hold the pristine inputs now: the reference may write into `inputs`.
        refs = self.reference(inputs, copy=False)
        del inputs
        if finite_only and not check.finite(refs, check.compare_chunk(self.memory.plan_bytes())):
            slot.recipe = None  # its inputs are not this trial's: prepared again before use
            return None, "the reference is not finite on signed inputs"
        slot.outputs_like(refs)
        plan = self.memory.plan_bytes()
        kept = None
        if plan == 0 or slot.buffer_bytes <= KEEP_SHARE * plan:
            kept = ([b.clone() if isinstance(b, torch.Tensor) else b for b in slot.in_bufs],
                    [r.clone() for r in refs])
        del refs
        slot.fill(recipe, kept)
        return slot, None

    def release(self, keep=()):
        """Hands back every slot's buffers but those named in `keep`."""
        for name in [n for n in self.slots if n not in keep]:
            self.slots.pop(name).release()
