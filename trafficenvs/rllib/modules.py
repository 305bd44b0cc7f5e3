"""RLModules for the games: a masked PPO network and fixed players (greedy, random, search).

:class:`MaskedPPOTorchRLModule` is RLlib's default PPO network (encoder, policy and
value heads built by ``PPOCatalog`` from ``model_config``) run on the ``observations``
part of the env's Dict observation, with the policy's logits of illegal actions
replaced by :data:`MASKED_LOGIT` before any distribution is built. Why replace and
not add ``log(mask)``: the result does not depend on the logits' size, and a row with
no legal action (the dummy last observation of a finished game, never acted on) gets
equal logits instead of NaNs. ``exp(-1e9)`` is exactly 0 in float32, so sampling,
argmax and the PPO loss (``logp`` of the taken action) never see an illegal action.

:class:`PolicyRLModule` wraps any of the package's agents (``trafficenvs.agents``:
``random``, ``greedy``, ``flatmc:...``, ``mcts:...``) as a frozen opponent: it
undoes the env's scaling, calls the agent's batched ``act`` and returns actions
directly (RLlib then samples nothing). It has no weights, so the learner never
trains it; the agent is built on first use, so a learner process that holds the
module but never runs it never compiles the agent's kernels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.torch import TorchRLModule

#: the logit given to an illegal action (its probability is exactly 0 in float32)
MASKED_LOGIT = -1e9


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every entry whose ``mask`` is not 1 set to :data:`MASKED_LOGIT`."""
    return logits.masked_fill(mask < 0.5, MASKED_LOGIT)


def split_obs(batch: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """``(batch with OBS = the observations only, the action mask)``; ``batch`` itself is
    left as it was (RLlib reuses it for the value pass and the loss)."""
    obs = batch[Columns.OBS]
    if not isinstance(obs, Mapping):
        raise ValueError("this module needs the Dict observation of TrafficMultiAgentEnv "
                         "({'observations': ..., 'action_mask': ...})")
    inner = dict(batch)
    inner[Columns.OBS] = obs["observations"]
    return inner, obs["action_mask"]


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """PPO's default torch module over ``observations``, masking illegal actions.

    Use it through ``RLModuleSpec(module_class=MaskedPPOTorchRLModule,
    model_config={"fcnet_hiddens": [128, 128], ...})`` (any ``DefaultModelConfig``
    keys); the env must be :class:`~trafficenvs.rllib.env.TrafficMultiAgentEnv`.
    """

    def __init__(self, *args: Any, observation_space: Any = None, **kwargs: Any):
        import gymnasium as gym

        if not (isinstance(observation_space, gym.spaces.Dict)
                and {"observations", "action_mask"} <= set(observation_space.spaces)):
            raise ValueError("MaskedPPOTorchRLModule needs a Dict observation space with "
                             f"'observations' and 'action_mask', got {observation_space}")
        # the catalog builds the encoder for the observation vector alone
        super().__init__(*args, observation_space=observation_space["observations"], **kwargs)
        # ... while the module reports the space it is fed (RLModuleSpec.from_module,
        # checkpoints and frozen copies rebuild it from this)
        self.observation_space = observation_space

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = split_obs(batch)
        out = super()._forward(inner, **kwargs)
        out[Columns.ACTION_DIST_INPUTS] = masked_logits(out[Columns.ACTION_DIST_INPUTS], mask)
        return out

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = split_obs(batch)
        out = super()._forward_train(inner, **kwargs)
        out[Columns.ACTION_DIST_INPUTS] = masked_logits(out[Columns.ACTION_DIST_INPUTS], mask)
        return out

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None:
            batch, _ = split_obs(batch)
        return super().compute_values(batch, embeddings)


class PolicyRLModule(TorchRLModule):
    """One of the package's agents as a fixed (never trained) RLModule.

    ``model_config``: ``agent`` (a spec as the command line spells it: ``random``,
    ``greedy``, ``flatmc:n=16``...), ``env_config`` (the env's, to build the agent for
    the same game configuration) and ``seed``.
    """

    def setup(self) -> None:
        cfg = dict(self.model_config or {})
        self._spec = str(cfg.get("agent", "random"))
        self._env_config = dict(cfg.get("env_config") or {})
        self._seed = int(cfg.get("seed", 0))
        self._agent: Any = None
        self._scale: np.ndarray | None = None
        # RLlib's torch bookkeeping (device lookup, state dicts) expects a module with
        # parameters: one frozen, unused parameter keeps this an ordinary torch module
        self._dummy = torch.nn.Parameter(torch.zeros(1), requires_grad=False)

    def _build(self) -> None:
        from trafficenvs.agents.zoo import make_agent
        from trafficenvs.registry import game_name, make_game
        from trafficenvs.rllib.env import obs_scale

        c = self._env_config
        game = make_game(game_name(c.get("game", "traffic_jam")),
                         num_players=int(c.get("num_players", 2)), **dict(c.get("options") or {}))
        self._agent = make_agent(self._spec, game, seed=self._seed)
        self._scale = obs_scale(game)
        self._dtype = game.obs_dtype

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        if self._agent is None:
            self._build()
        obs = batch[Columns.OBS]
        x = np.asarray(obs["observations"].detach().cpu().numpy(), np.float32)
        mask = obs["action_mask"].detach().cpu().numpy() > 0.5
        raw = np.rint(x / self._scale).astype(self._dtype)
        n = len(x)
        if n:
            actions = self._agent.act(raw, mask, np.zeros(n, np.int64))
        else:
            actions = np.zeros(0, np.int64)
        # a finished game's dummy row has no legal action: any action, never played
        return {Columns.ACTIONS: torch.as_tensor(actions, dtype=torch.int64)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{self._spec} is a fixed player: it is not trained")
