"""MaskablePPO models as players: load a checkpoint, freeze a learner for self-play.

A trained model plays through the same batched :class:`~trafficenvs.agents.policy.Policy`
interface as every other agent: one forward pass for the whole batch, illegal
actions masked out. The observation transform the model was trained with
(:class:`ScaledExtractor`) is part of the saved policy, so a checkpoint needs
nothing else to play.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from trafficenvs.agents.categorical_kernels import sample_masked_categorical


def inverse_bounds(observation_space: spaces.Box) -> th.Tensor:
    """``1 / high`` per entry, flat (a bound of 0 counts as 1): observation entries times
    this are in [0, 1]."""
    high = np.maximum(np.asarray(observation_space.high, np.float32).reshape(-1), 1.0)
    return th.as_tensor(1.0 / high)


class ScaledExtractor(BaseFeaturesExtractor):
    """Features ``observation / high``: every entry in [0, 1] by its exact bound.

    The v1 observations are small integers with exact per-entry bounds (the
    observation space's ``high``): flags and one-hot entries (bound 1) pass through,
    counts become the share of their true maximum. No running statistics, so a frozen
    opponent or a shipped checkpoint carries its whole input transform in its weights
    (the bounds are a buffer of the module).
    """

    def __init__(self, observation_space: spaces.Box):
        super().__init__(observation_space, int(np.prod(observation_space.shape)))
        self.register_buffer("inv_high", inverse_bounds(observation_space))

    def forward(self, observations: th.Tensor) -> th.Tensor:
        return th.flatten(observations, start_dim=1).float() * self.inv_high


#: the network the ``train`` command builds (small: it must train in minutes on a laptop)
DEFAULT_POLICY_KWARGS: dict[str, Any] = {
    "features_extractor_class": ScaledExtractor,
    "net_arch": {"pi": [128, 128], "vf": [128, 128]},
}


def actor_logits(policy: Any, latent_pi: th.Tensor, observation: Any, action_mask: Any
                 ) -> th.Tensor:
    """The actor's logits of ``policy`` for ``latent_pi``, with what its prior adds for
    these observations and masks if it has one (``prior_logits``: the greedy prior of
    ``agents/prior_policy.py``), unmasked: the one place every player, trainer and
    distillation reads a policy's logits from."""
    logits = policy.action_net(latent_pi)
    prior = getattr(policy, "prior_logits", None)
    return logits if prior is None else logits + prior(observation, action_mask)


def policy_outputs(policy: Any, observation: Any, action_mask: Any
                   ) -> tuple[th.Tensor, th.Tensor]:
    """An SB3 actor-critic ``policy``'s unmasked logits ``(B, A)`` (with its prior's
    bonus: :func:`actor_logits`) and values ``(B,)`` from one pass of its features:
    a search's leaves and expert iteration's training read both, and the plan
    network's features (a numba pass over the maze) are worth computing once."""
    obs = th.as_tensor(np.asarray(observation))
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        latent_pi = policy.mlp_extractor.forward_actor(features[0])
        latent_vf = policy.mlp_extractor.forward_critic(features[1])
    logits = actor_logits(policy, latent_pi, observation, action_mask)
    return logits, policy.value_net(latent_vf).reshape(-1)


class PPOPolicy:
    """A MaskablePPO actor as a batched policy (greedy argmax by default).

    ``deterministic=False`` samples from the masked action distribution instead.
    """

    def __init__(self, policy: Any, name: str = "ppo", deterministic: bool = True):
        self.policy = policy
        self.policy.set_training_mode(False)
        self.name = name
        self.deterministic = deterministic

    @classmethod
    def load(cls, path: str | Path, name: str | None = None,
             deterministic: bool = True, game: Any = None) -> PPOPolicy:
        """A player from a ``MaskablePPO.save`` zip (e.g. ``agents/checkpoints/*.zip``)
        or a weights-only checkpoint (``BatchedPPO.save``), told apart by the zip's
        members.

        Nothing in either file is unpickled (``agents/checkpoint.py``): a checkpoint from
        anyone is safe to load. ``game``: the game it must fit (its spaces are used).
        """
        from trafficenvs.agents.checkpoint import (
            checkpoint_format,
            load_model,
            read_weights,
            sb3_policy,
        )

        path = Path(path)
        if checkpoint_format(path) == "weights":
            config, state = read_weights(path, game=game)
            policy = sb3_policy(config, state, game)
        else:
            policy = load_model(path, game=game).policy
        return cls(policy, name=name or f"ppo:{path.name}", deterministic=deterministic)

    @classmethod
    def frozen(cls, model: Any, name: str) -> PPOPolicy:
        """A frozen copy of a learner's current policy (a self-play opponent)."""
        pol = copy.deepcopy(model.policy)
        for p in pol.parameters():
            p.requires_grad_(False)
        return cls(pol, name=name, deterministic=False)

    def check_fits(self, obs_dim: int, num_actions: int) -> None:
        """Raise ``ValueError`` if the model was built for other spaces."""
        shape = self.policy.observation_space.shape
        n = self.policy.action_space.n
        if shape != (obs_dim,) or n != num_actions:
            raise ValueError(
                f"{self.name}: model expects observations {shape} and {n} actions; this game "
                f"has ({obs_dim},) and {num_actions} (another game or player count?)"
            )

    def evaluate(self, observation: np.ndarray, action_mask: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The network as a search's leaf evaluator: the actor's logits (unmasked; the
        search reads the legal ones) and the critic's value for the seat to move,
        which a trained critic gives in the results' scale (the learner's reward is
        its result). ``SearchPolicy(game, "gumbel:...", evaluator=p.evaluate)``."""
        with th.no_grad():
            logits, values = policy_outputs(self.policy, observation, action_mask)
        return logits.numpy(), values.numpy()

    def _logits(self, observation: np.ndarray, action_mask: np.ndarray
                ) -> tuple[th.Tensor, th.Tensor]:
        """The observations as a tensor and the actor's unmasked logits for them."""
        pol = self.policy
        obs = th.as_tensor(np.asarray(observation))
        features = pol.extract_features(obs, pol.pi_features_extractor)
        return obs, actor_logits(pol, pol.mlp_extractor.forward_actor(features),
                                 observation, action_mask)

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, current_player: np.ndarray
    ) -> np.ndarray:
        # The actor's logits directly (no torch Categorical: its normalisation over
        # hundreds of actions costs more than the network). Deterministic: illegal
        # actions pushed to -inf, then argmax. Sampled: the numba kernel that reads
        # only the legal logits (``categorical_kernels``; torch's Gumbel-max over every
        # action cost more than the network), from torch's global generator.
        with th.no_grad():
            _, logits = self._logits(observation, action_mask)
            if not self.deterministic:
                actions, _ = sample_masked_categorical(logits.float(), np.asarray(action_mask))
                return actions.numpy()
            mask = th.as_tensor(np.asarray(action_mask, bool))
            logits = logits.masked_fill(~mask, -th.inf)
            return logits.argmax(dim=1).numpy().astype(np.int64)
