"""A learner with the greedy player's move as a prior: ``--prior-beta`` of ``train``.

Why (Jakarta Traffic): the plan network trained by PPO wins about 0.52
against the greedy player, and greedy against itself 0.5, but the two are right in
different places. Played together, the network's move where it is confident and
greedy's otherwise, they won 0.58-0.61 in 1000-game arenas for ``beta`` 3-8 (0.54 with
``beta`` 0, 0.51 with 100): the network knows some moves far better than greedy, and
its unsure choices are worse than greedy's.

The policy here makes that a policy of its own, trained as one (residual policy
learning: a learned policy over a fixed prior): its action distribution is

    softmax(logits + beta * onehot(greedy's move))

over the legal actions, with ``beta`` a learned scalar (started at ``--prior-beta``).
Greedy's move is computed from the observation and the mask inside the policy (the
game's own greedy player, numba, about 40 us a decision), so a checkpoint plays from
the plain observation everywhere, like the plan features. PPO's gradient goes through
the whole distribution: the network learns where to leave greedy's move and by how
much, ``beta`` how far to trust greedy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.policies import BaseModel
from torch import nn

from trafficenvs.agents.plan_policy import PlanPolicy
from trafficenvs.agents.ppo import actor_logits


class GreedyPrior(nn.Module):
    """``beta`` at the greedy player's move of each row, 0 elsewhere: ``(B, A)``.

    ``beta`` is a learned parameter; the greedy player (not a module: it holds no
    weights) is built from the game and player count, so the prior pickles and loads
    with the policy's constructor arguments."""

    def __init__(self, game: str, num_players: int, num_actions: int, beta: float):
        super().__init__()
        from trafficenvs.agents.greedy import make_greedy
        from trafficenvs.registry import make_game

        g = make_game(game, num_players=num_players)
        if g.num_actions != num_actions:
            raise ValueError(f"the prior's game has {g.num_actions} actions, the policy "
                             f"{num_actions}")
        self.beta = nn.Parameter(th.tensor(float(beta)))
        self.greedy = make_greedy(g, seed=0, name="prior")
        self.num_actions = num_actions

    def moves(self, obs: Any, masks: Any) -> np.ndarray:
        """Greedy's move per row (int64 ``(B,)``) for observations and masks given as
        arrays or tensors (SB3 passes float observations and numpy or tensor masks);
        the player's ``act`` converts them to its dtypes and checks their shapes."""
        o, m = (x.detach().cpu().numpy() if isinstance(x, th.Tensor) else np.asarray(x)
                for x in (obs, masks))
        b = o.shape[0]
        return self.greedy.act(o.reshape(b, -1), m.reshape(b, -1), np.zeros(b, np.int64))

    def forward(self, obs: Any, masks: Any) -> th.Tensor:
        g = th.from_numpy(self.moves(obs, masks))
        onehot = th.zeros((g.shape[0], self.num_actions), dtype=th.float32)
        onehot[th.arange(g.shape[0]), g] = 1.0
        return onehot * self.beta


class PriorPlanPolicy(PlanPolicy):
    """The plan network (:class:`~trafficenvs.agents.plan_policy.PlanPolicy`) with
    :class:`GreedyPrior` added to its logits (module docstring).

    Without masks (SB3 calls some paths so) there is no greedy move to add, so every
    entry point that builds the action distribution is given them here:
    ``forward``, ``evaluate_actions``, ``get_distribution`` (and so ``predict``). They,
    :class:`~trafficenvs.agents.ppo.PPOPolicy` and distillation read the logits
    through :func:`~trafficenvs.agents.ppo.actor_logits`, which adds
    :meth:`prior_logits`."""

    def __init__(self, *args: Any, prior_beta: float = 6.0, **kwargs: Any):
        self._prior_beta = float(prior_beta)
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule: Any) -> None:
        fx = self.features_extractor
        self.prior = GreedyPrior(fx.game, fx.num_players, int(self.action_space.n),
                                 self._prior_beta)
        super()._build(lr_schedule)  # its optimizer then holds beta too

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["prior_beta"] = self._prior_beta
        return data

    def prior_logits(self, obs: Any, masks: Any) -> th.Tensor:
        """What the prior adds to the network's logits for these rows."""
        if masks is None:
            raise ValueError("the greedy prior needs the action masks")
        return self.prior(obs, masks)

    def _dist(self, latent_pi: th.Tensor, obs: Any, masks: Any) -> Any:
        logits = actor_logits(self, latent_pi, obs, masks)
        dist = self.action_dist.proba_distribution(action_logits=logits)
        dist.apply_masking(masks)
        return dist

    def _latents(self, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        features = self.extract_features(obs)
        if self.share_features_extractor:
            return self.mlp_extractor(features)
        pi_features, vf_features = features
        return (self.mlp_extractor.forward_actor(pi_features),
                self.mlp_extractor.forward_critic(vf_features))

    def forward(self, obs: th.Tensor, deterministic: bool = False,
                action_masks: np.ndarray | None = None) -> tuple[th.Tensor, ...]:
        latent_pi, latent_vf = self._latents(obs)
        values = self.value_net(latent_vf)
        dist = self._dist(latent_pi, obs, action_masks)
        actions = dist.get_actions(deterministic=deterministic)
        log_prob = dist.log_prob(actions)
        return actions.reshape((-1, *self.action_space.shape)), values, log_prob

    def evaluate_actions(self, obs: th.Tensor, actions: th.Tensor,
                         action_masks: th.Tensor | None = None) -> tuple[th.Tensor, ...]:
        latent_pi, latent_vf = self._latents(obs)
        dist = self._dist(latent_pi, obs, action_masks)
        return self.value_net(latent_vf), dist.log_prob(actions), dist.entropy()

    def get_distribution(self, obs: Any, action_masks: np.ndarray | None = None) -> Any:
        features = BaseModel.extract_features(self, obs, self.pi_features_extractor)
        latent_pi = self.mlp_extractor.forward_actor(features)
        return self._dist(latent_pi, obs, action_masks)


__all__ = ["GreedyPrior", "PriorPlanPolicy"]
