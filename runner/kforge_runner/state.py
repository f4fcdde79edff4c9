"""Models that keep state between calls: every call starts from the state the model was built with.

Some problems' models change themselves in forward (KernelBench v0's 33_VanillaRNN assigns
`self.hidden = tanh(...)`): the output of a call depends on how many calls came before it. The
judge calls its reference more often than the candidate calls its model (the load's own draw, the
contract, shape variants, baselines), so their outputs would differ on honest code. KernelBench's
harness keeps the two in lockstep instead; kforge makes every call of such a model a first call:
the tensors its modules hold besides their parameters are put back before each call, on both
sides (the judge finds the problem stateful, the candidate's host is told so). Parameters are
not state here: a forward that changes its own weights is not supported.
"""
import torch


def snapshot(model):
    """(module, attribute, tensor copy) for every tensor a module of `model` holds that is not a
    parameter: its buffers and plain tensor attributes (`self.hidden = torch.randn(...)`)."""
    if not isinstance(model, torch.nn.Module):
        return []
    held = []
    for module in model.modules():
        tensors = [(n, v) for n, v in vars(module).items() if isinstance(v, torch.Tensor)]
        tensors += [(n, v) for n, v in module._buffers.items() if v is not None]
        held += [(module, n, v.detach().clone()) for n, v in tensors
                 if not isinstance(v, torch.nn.Parameter)]
    return held


def restore(held):
    for module, name, value in held:
        setattr(module, name, value.clone())


def changed_names(held):
    """The names of the tensors in `held` that were replaced or written since the snapshot."""
    moved = set()
    for module, name, value in held:
        now = getattr(module, name, None)
        if not isinstance(now, torch.Tensor) or now.shape != value.shape or \
                now.dtype != value.dtype or not torch.equal(now.detach().cpu(), value.cpu()):
            moved.add(name)
    return sorted(moved)


def fingerprint(outputs):
    """A few numbers that differ, in practice, whenever the outputs do: per output its sum and
    sum of squares in float64, and an evenly strided sample. Kept instead of the outputs, so
    telling a stateful model needs the memory of one call's outputs only."""
    prints = []
    for x in outputs:
        if not isinstance(x, torch.Tensor):
            prints.append(repr(x))
            continue
        flat = x.detach().reshape(-1)
        if flat.is_complex():
            flat = torch.view_as_real(flat).reshape(-1)
        flat = flat.to(torch.float64)
        step = max(1, flat.numel() // 64)
        prints.append((tuple(x.shape), float(flat.sum()), float((flat * flat).sum()),
                       flat[::step].cpu().tolist()))
    return prints


def keep_initial_state(model, held):
    """Every call of `model` from now on starts from the state in `held`."""
    forward = model.forward

    def from_initial_state(*args, **kwargs):
        restore(held)
        return forward(*args, **kwargs)

    model.forward = from_initial_state
