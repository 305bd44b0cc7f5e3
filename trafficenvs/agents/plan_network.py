"""The plan network (and its greedy prior) as the batched trainer's network.

Why: ``trafficenvs train --arch plan [--prior-beta B]`` is how Jakarta Traffic's shipped
policy is trained (``plan_policy.py``, ``prior_policy.py``: a flat network learned 4-10%
of greedy's honks). The batched trainer (``trainer.py``) reads a network through a
small interface (:class:`~trafficenvs.agents.trainer.ActorCritic`'s): ``features``
once per rollout, ``heads`` per minibatch, ``value``, ``prior_moves``. Here the SB3
plan policy's own modules are adopted under that interface, so there is one plan
network (its extractor, trunks and head are the SB3 policy's classes, not copies), its
parameter names are the SB3 policy's (a checkpoint loads into either), and the
arena plays the trainer's checkpoints through ``PPOPolicy`` as before.

What the batched trainer does better than the SB3 route with the prior: greedy's move
(a numba pass, tens of microseconds a position) is computed once per position while
collecting (:meth:`PlanActorCritic.prior_moves`) and kept with the rollout; SB3's
``evaluate_actions`` computes it again in every epoch's minibatches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch as th
from torch import nn


class PlanActorCritic(nn.Module):
    """The plan network of ``game`` (``prior_beta``: with the greedy prior, started at
    that weight), with :class:`~trafficenvs.agents.trainer.ActorCritic`'s interface.

    Built as SB3 builds :class:`~trafficenvs.agents.plan_policy.PlanPolicy` (its
    orthogonal initialisation), drawing the initial weights from ``generator`` (the
    process's global torch RNG is left as it was). Its modules are registered under
    the SB3 policy's names: :meth:`state_dict` is that policy's.
    """

    #: the action head is not one linear layer: no head at the legal lists only
    listable = False
    arch = "plan"

    def __init__(self, game: Any, net: Sequence[int] = (128, 128),
                 prior_beta: float | None = None, generator: th.Generator | None = None):
        super().__init__()
        from trafficenvs.agents.checkpoint import build_policy, weights_config

        if not net or any(int(w) < 1 for w in net):
            raise ValueError(f"net must be one or more layer widths >= 1, got {net!r}")
        self.net = tuple(int(w) for w in net)
        self.num_actions = int(game.num_actions)
        self.prior_beta = None if prior_beta is None else float(prior_beta)
        seed = int(th.randint(0, 2**62, (1,), generator=generator))
        with th.random.fork_rng(devices=[]):
            th.manual_seed(seed)
            policy = build_policy(weights_config(game, self.net, arch="plan",
                                                 prior_beta=self.prior_beta), game)
        self.features_extractor = policy.features_extractor
        self.pi_features_extractor = self.features_extractor
        self.vf_features_extractor = self.features_extractor
        self.mlp_extractor = policy.mlp_extractor
        self.action_net = policy.action_net
        self.value_net = policy.value_net
        self.prior = getattr(policy, "prior", None)
        if set(self.state_dict()) != set(policy.state_dict()):
            raise RuntimeError("the plan network's parameters are not the SB3 policy's")

    def prior_moves(self, observations: th.Tensor, legal: th.Tensor | np.ndarray
                    ) -> th.Tensor | None:
        """The greedy player's move per row (int64 ``(B,)``) for the prior, or ``None``
        without one. ``legal``: the action masks (True where legal)."""
        if self.prior is None:
            return None
        return th.from_numpy(self.prior.moves(observations, legal))

    def forward(self, observations: th.Tensor, prior_moves: th.Tensor | None = None
                ) -> tuple[th.Tensor, th.Tensor]:
        """``(logits (B, A) unmasked, values (B,))``; with the prior, ``prior_moves``
        (:meth:`prior_moves`) is required."""
        return self.heads(self.features_extractor(observations), prior_moves=prior_moves)

    def heads(self, features: th.Tensor, precision: str = "fp32",
              prior_moves: th.Tensor | None = None) -> tuple[th.Tensor, th.Tensor]:
        """:meth:`forward` from the extractor's features (the maze's plan features
        are a numba pass: the update computes them once per rollout). ``bf16``: the
        actor's and critic's hidden layers under autocast (the plan head, with its
        cell-number gathers, stays float32)."""
        if precision == "bf16":
            with th.autocast(features.device.type, dtype=th.bfloat16):
                latent_pi, latent_vf = self.mlp_extractor(features)
            latent_pi, latent_vf = latent_pi.float(), latent_vf.float()
        else:
            latent_pi, latent_vf = self.mlp_extractor(features)
        logits = self.action_net(latent_pi)
        if self.prior is not None:
            if prior_moves is None:
                raise ValueError("the network has the greedy prior: pass prior_moves "
                                 "(PlanActorCritic.prior_moves)")
            # + beta at greedy's move of each row (GreedyPrior's one-hot times beta),
            # differentiable in beta
            logits = logits.scatter_add(1, prior_moves.view(-1, 1),
                                        self.prior.beta.view(1, 1).expand(len(logits), 1))
        return logits, self.value_net(latent_vf).view(-1)

    def value(self, observations: th.Tensor) -> th.Tensor:
        """``V`` only, ``(B,)``."""
        features = self.features_extractor(observations)
        return self.value_net(self.mlp_extractor.forward_critic(features)).view(-1)


__all__ = ["PlanActorCritic"]
