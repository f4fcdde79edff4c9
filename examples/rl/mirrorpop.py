"""MirrorPop: drop the sampled sequences on which the trainer and the rollout engine disagree.

RL trainers sample with one engine (vLLM, SGLang) and learn with another (FSDP, Megatron); the
two give the same tokens different probabilities (kernels, precision, MoE routing). MirrorPop
keeps sequence b of a batch only when, per counted token on average, the log importance ratio
is small:

    log rho[b, t] = logp_trainer[b, t] - logp_rollout[b, t]
    keep[b]       = mean over {t : mask[b, t]} of |log rho[b, t]|  <=  delta

A mean (not a sum) so that long sequences are not dropped for being long. A sequence with no
counted token has mean 0 and is kept (it adds nothing to the loss); one whose mean is not
finite (a counted token the trainer gives probability 0, a NaN) is dropped.

Inputs (torch tensors; the computation runs in float64 on their device):
    logp_trainer  [B, T] float: log-probability of each sampled token under the trainer's policy
    logp_rollout  [B, T] float: the same tokens' log-probabilities as the rollout engine reported
    mask          [B, T] bool or 0/1 integers: True/1 for response tokens that count, False/0 for
                  padding and prompt tokens (their log-probs are never read, so -inf there is fine)
    delta         float >= 0

The same computation is src/score/mirrorpop.h in kforge; both are checked against
tests/rl/mirrorpop_vectors.json. Standard library and torch only.

Use in a policy loss, e.g.:
    keep = keep_mask(logp_new_old, logp_rollout, response_mask, delta=0.05)
    loss_mask = response_mask & keep[:, None]          # or token_mask(...)
"""
import math

import torch


def _check(logp_trainer, logp_rollout, mask, delta=None):
    for name, t in (("logp_trainer", logp_trainer), ("logp_rollout", logp_rollout), ("mask", mask)):
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s must be a torch.Tensor, not %s" % (name, type(t).__name__))
        if t.dim() != 2:
            raise ValueError("%s must be [B, T], not %d-dimensional" % (name, t.dim()))
    if logp_trainer.shape != logp_rollout.shape or logp_trainer.shape != mask.shape:
        raise ValueError("logp_trainer %s, logp_rollout %s and mask %s must have one shape [B, T]"
                         % (tuple(logp_trainer.shape), tuple(logp_rollout.shape), tuple(mask.shape)))
    if not logp_trainer.is_floating_point() or not logp_rollout.is_floating_point():
        raise TypeError("log-probabilities must be floating-point tensors")
    if mask.dtype != torch.bool:
        if mask.is_floating_point() or mask.is_complex():
            raise TypeError("mask must be bool or integer 0/1, not %s" % mask.dtype)
        if bool(((mask != 0) & (mask != 1)).any()):
            raise ValueError("mask values must be 0 or 1")
    if delta is not None:
        if isinstance(delta, bool) or not isinstance(delta, (int, float)):
            raise TypeError("delta must be a number")
        if not math.isfinite(delta) or delta < 0:
            raise ValueError("delta must be a finite number >= 0, not %r" % delta)


def mean_abs_log_ratio(logp_trainer, logp_rollout, mask):
    """[B] float64: mean over counted tokens of |logp_trainer - logp_rollout| (0 where none count)."""
    _check(logp_trainer, logp_rollout, mask)
    counted = mask.to(torch.bool)
    diff = (logp_trainer.to(torch.float64) - logp_rollout.to(torch.float64)).abs()
    # where(), not a product with the mask: padding may hold -inf, and -inf * 0 is nan.
    diff = torch.where(counted, diff, torch.zeros_like(diff))
    n = counted.sum(dim=1).to(torch.float64)
    return diff.sum(dim=1) / n.clamp(min=1.0)


def keep_mask(logp_trainer, logp_rollout, mask, delta):
    """[B] bool: True for the sequences MirrorPop keeps."""
    _check(logp_trainer, logp_rollout, mask, delta)
    m = mean_abs_log_ratio(logp_trainer, logp_rollout, mask)
    return torch.isfinite(m) & (m <= float(delta))


def token_mask(logp_trainer, logp_rollout, mask, delta):
    """[B, T] bool: `mask` with the dropped sequences' tokens turned off (a loss mask)."""
    keep = keep_mask(logp_trainer, logp_rollout, mask, delta)
    return mask.to(torch.bool) & keep[:, None]
