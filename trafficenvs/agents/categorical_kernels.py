"""The masked categorical's sample, in numba: one pass per row over the legal actions.

Why a kernel: a policy's sample from ``softmax(logits)`` restricted to the legal
actions, done with torch over the whole ``(B, A)`` table, takes a fill of the illegal
logits, a ``log_softmax``, an ``exp``, a running sum and a search, each over every
action, legal or not. A position has few legal actions next to the action set
(Traffic Jam: 7 of 600 on average), and ``exp`` of the illegal entries' huge negative
log-probabilities takes a slow path (it underflows). Measured on the 2-core CPU, the
batched trainer's rollout spent more time sampling its 256 actions per step than in the
network (Traffic Jam: ``exp`` alone 32% of the rollout, the network's matrix products
33%). Here each row reads its legal logits, finds their maximum, sums ``exp(logit -
max)`` and walks the running sum to a uniform draw: the same inverse-CDF sample as
before, from work proportional to the legal actions (and one read of the mask).

The random numbers stay with the caller (one uniform per row, from the caller's torch
generator), so a trainer's random stream and its determinism are its own.
"""

from __future__ import annotations

import math

import numpy as np
import torch as th

from trafficenvs.core.jit import kernel


@kernel
def sample_masked_rows(logits, legal, uniforms, actions, log_probs):
    """Per row ``i``: ``actions[i]`` drawn from ``softmax(logits[i])`` over the actions
    where ``legal[i]`` is nonzero, by the inverse CDF at ``uniforms[i]`` in ``[0, 1)``
    (the first legal action whose running sum of probabilities exceeds it; rounding past
    the last sum takes the last legal action), and ``log_probs[i]`` its
    log-probability. A row with no legal action gets action ``-1`` (the caller
    refuses it). Each row touches only its own entries; nothing is allocated."""
    rows, width = logits.shape
    for i in range(rows):
        top = -math.inf
        last = -1
        for a in range(width):
            if legal[i, a] != 0:
                last = a
                if logits[i, a] > top:
                    top = logits[i, a]
        if last < 0:
            actions[i] = -1
            log_probs[i] = 0.0
            continue
        total = 0.0
        for a in range(width):
            if legal[i, a] != 0:
                total += math.exp(float(logits[i, a]) - top)
        target = uniforms[i] * total
        running = 0.0
        choice = last
        for a in range(width):
            if legal[i, a] != 0:
                running += math.exp(float(logits[i, a]) - top)
                if running > target:
                    choice = a
                    break
        actions[i] = choice
        log_probs[i] = float(logits[i, choice]) - top - math.log(total)


@kernel(fastmath=True)
def listed_logits_rows(latent, weight, bias, index, valid, out, fill):
    """``out[b, k] = latent[b] . weight[index[b, k]] + bias[index[b, k]]`` where
    ``valid[b, k]``, else ``fill``: a linear head's logits at each row's listed
    actions only."""
    rows, width = index.shape
    hidden = latent.shape[1]
    for b in range(rows):
        for k in range(width):
            if valid[b, k]:
                a = index[b, k]
                acc = np.float32(0.0)
                for h in range(hidden):
                    acc += latent[b, h] * weight[a, h]
                out[b, k] = acc + bias[a]
            else:
                out[b, k] = fill


@kernel(fastmath=True)
def listed_logits_backward(grad, latent, weight, index, valid, grad_latent, grad_weight,
                           grad_bias):
    """The gradients of :func:`listed_logits_rows` from ``grad`` (``(B, K)``), added
    into ``grad_latent`` (``(B, H)``), ``grad_weight`` (``(A, H)``) and ``grad_bias``
    (``(A,)``), which start at zero; padding entries give nothing."""
    rows, width = index.shape
    hidden = latent.shape[1]
    for b in range(rows):
        for k in range(width):
            if valid[b, k]:
                a = index[b, k]
                g = grad[b, k]
                grad_bias[a] += g
                for h in range(hidden):
                    grad_latent[b, h] += g * weight[a, h]
                    grad_weight[a, h] += g * latent[b, h]


class ListedLinear(th.autograd.Function):
    """A linear head evaluated at each row's listed actions only (see
    :func:`listed_linear`)."""

    @staticmethod
    def forward(ctx, latent, weight, bias, index, valid, fill):  # noqa: D102
        out = th.empty(index.shape, dtype=th.float32)
        listed_logits_rows(latent.numpy(), weight.numpy(), bias.numpy(), index.numpy(),
                           valid.numpy(), out.numpy(), float(fill))
        ctx.save_for_backward(latent, weight, index, valid)
        return out

    @staticmethod
    def backward(ctx, grad):  # noqa: D102
        latent, weight, index, valid = ctx.saved_tensors
        grad_latent = th.zeros_like(latent)
        grad_weight = th.zeros_like(weight)
        grad_bias = th.zeros(weight.shape[0], dtype=weight.dtype)
        listed_logits_backward(grad.contiguous().numpy(), latent.numpy(), weight.numpy(),
                               index.numpy(), valid.numpy(), grad_latent.numpy(),
                               grad_weight.numpy(), grad_bias.numpy())
        return grad_latent, grad_weight, grad_bias, None, None, None


def listed_linear(latent: th.Tensor, weight: th.Tensor, bias: th.Tensor,
                  index: th.Tensor, valid: th.Tensor, fill: float) -> th.Tensor:
    """``F.linear(latent, weight, bias).gather(1, index).masked_fill(~valid, fill)``,
    with its gradients, without the full ``(B, A)`` logits.

    Why: where a row has a few legal actions among many (Traffic Jam: 7 of 600 on
    average), the head's matrix product over every action, and the backward of the
    gather that picks the legal ones (a ``(B, A)`` fill and scatter), were about a
    quarter of the batched trainer's minibatch, for logits that the masked categorical
    never reads. Here each listed logit is one dot product (numba, float32, CPU).
    Where most actions are legal the dense product is faster: the trainer decides
    by the lists' share of the action set (``BatchedPPO``).

    ``latent``: ``(B, H)`` float32; ``weight``: ``(A, H)``; ``bias``: ``(A,)``;
    ``index``, ``valid``: ``(B, K)`` from :func:`~trafficenvs.agents.trainer.legal_lists`.
    """
    if not (latent.dtype == weight.dtype == bias.dtype == th.float32):
        raise ValueError("listed_linear takes float32 latent, weight and bias, got "
                         f"{latent.dtype}, {weight.dtype}, {bias.dtype}")
    if any(t.device.type != "cpu" for t in (latent, weight, bias, index, valid)):
        raise ValueError("listed_linear runs on the CPU")
    if (latent.dim() != 2 or weight.dim() != 2 or latent.shape[1] != weight.shape[1]
            or bias.shape != (weight.shape[0],) or index.shape != valid.shape
            or index.dim() != 2 or index.shape[0] != latent.shape[0]
            or index.dtype != th.int64 or valid.dtype != th.bool):
        raise ValueError(f"listed_linear: shapes do not fit: latent {tuple(latent.shape)}, "
                         f"weight {tuple(weight.shape)}, bias {tuple(bias.shape)}, index "
                         f"{tuple(index.shape)} {index.dtype}, valid {tuple(valid.shape)} "
                         f"{valid.dtype}")
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= weight.shape[0]):
        raise ValueError(f"listed_linear: index outside 0..{weight.shape[0] - 1}")
    return ListedLinear.apply(latent.contiguous(), weight.contiguous(), bias.contiguous(),
                              index.contiguous(), valid.contiguous(), fill)


def sample_masked_categorical(logits: th.Tensor, legal: th.Tensor | np.ndarray,
                  generator: th.Generator | None = None,
                  actions: th.Tensor | None = None, log_probs: th.Tensor | None = None
                  ) -> tuple[th.Tensor, th.Tensor]:
    """One action per row from the masked categorical of ``logits`` and its
    log-probability: ``(actions int64 (B,), log p(action) float32 (B,))``.

    ``logits``: ``(B, A)`` float32 CPU tensor (unmasked); ``legal``: ``(B, A)`` bool or
    integer, nonzero where the action is legal (the env's action mask as it is, no
    inversion needed). ``generator``: where the ``B`` uniforms come from (default
    torch's global one). ``actions``, ``log_probs``: where to write them (say, a
    rollout's rows), else new tensors. The same distribution as
    ``sample_categorical(masked_log_probs(logits, ~legal), ~legal)`` from ``B`` random
    numbers, in ``O(legal actions)`` per row (see the module). Raises ``ValueError`` on
    shapes or dtypes that do not fit, or a row with no legal action.
    """
    if not isinstance(logits, th.Tensor) or logits.dim() != 2 or logits.dtype != th.float32:
        raise ValueError("logits must be a (B, A) float32 tensor, got "
                         f"{getattr(logits, 'dtype', type(logits))} "
                         f"{tuple(getattr(logits, 'shape', ()))}")
    if logits.device.type != "cpu":
        raise ValueError("sample_masked_categorical runs on the CPU; logits are on "
                         f"{logits.device}")
    mask = legal.numpy() if isinstance(legal, th.Tensor) else np.asarray(legal)
    if mask.shape != tuple(logits.shape):
        raise ValueError(f"legal must have the logits' shape {tuple(logits.shape)}, got "
                         f"{mask.shape}")
    if mask.dtype != np.bool_ and not np.issubdtype(mask.dtype, np.integer):
        raise ValueError(f"legal must be bool or integer, got {mask.dtype}")
    rows = logits.shape[0]
    if actions is None:
        actions = th.empty(rows, dtype=th.int64)
    if log_probs is None:
        log_probs = th.empty(rows, dtype=th.float32)
    for name, out, dtype in (("actions", actions, th.int64),
                             ("log_probs", log_probs, th.float32)):
        if out.shape != (rows,) or out.dtype != dtype or not out.is_contiguous():
            raise ValueError(f"{name} must be a contiguous ({rows},) {dtype} tensor, got "
                             f"{out.dtype} {tuple(out.shape)}")
    uniforms = th.rand(rows, generator=generator, dtype=th.float64)
    sample_masked_rows(logits.detach().contiguous().numpy(), mask, uniforms.numpy(),
                       actions.numpy(), log_probs.numpy())
    if rows and int(actions.min()) < 0:
        bad = np.flatnonzero(actions.numpy() < 0)[:5].tolist()
        raise ValueError(f"rows {bad} have no legal action")
    return actions, log_probs


def sample_masked_tensor(logits: th.Tensor, legal: th.Tensor, uniforms: th.Tensor
                         ) -> tuple[th.Tensor, th.Tensor]:
    """:func:`sample_masked_rows` in torch operations, on the logits' device (a GPU's
    learner, where the numba kernel cannot read the tensors): the same inverse-CDF
    sample at the same ``uniforms`` (``(B,)`` in ``[0, 1)``), summed in float64 as the
    kernel sums, so both draw the same actions but where a uniform falls within
    rounding of a boundary. ``legal``: ``(B, A)`` bool on the same device, every row
    with a legal action (the caller checks). Returns ``(actions int64, log p float32)``.
    """
    x = logits.detach().double().masked_fill(~legal, -math.inf)
    top = x.amax(dim=1, keepdim=True)
    running = (x - top).exp().cumsum(dim=1)  # exp(-inf) = 0: illegal entries add nothing
    total = running[:, -1:]
    # the first action whose running sum exceeds the target: how many do not
    choice = (running <= uniforms.to(x).view(-1, 1) * total).sum(dim=1)
    width = x.shape[1]
    last = (width - 1) - legal.flip(1).to(th.uint8).argmax(dim=1)  # the last legal action
    choice = th.where(choice >= width, last, choice)
    log_probs = x.gather(1, choice.view(-1, 1)).view(-1) - top.view(-1) - total.view(-1).log()
    return choice, log_probs.float()


__all__ = ["ListedLinear", "listed_linear", "listed_logits_backward", "listed_logits_rows",
           "sample_masked_categorical", "sample_masked_rows", "sample_masked_tensor"]
