"""The batched env behind Gymnasium's vector door: ``gymnasium.make_vec(id, num_envs=N)``.

``gymnasium.make_vec("trafficenvs/TrafficJam-v1", num_envs=4096, opponents="greedy")``
returns :class:`TrafficVectorEnv`: the numba-compiled batch of ``N`` games with the
learner in one seat of each and the opponents moving inside ``step`` (the SB3 bridge's
:class:`~trafficenvs.agents.sb3_bridge.SelfPlayVecEnv` underneath), as a
``gymnasium.vector.VectorEnv``: ``single_observation_space`` and
``single_action_space``, their batched ``observation_space`` and ``action_space``, and
the five-tuple ``step``. (``vectorization_mode="sync"`` still gives Gymnasium's own
``SyncVectorEnv`` of ``N`` single-game envs, much slower.)

Autoreset is Gymnasium's ``SAME_STEP`` mode, declared in ``metadata``: the step that
ends a game returns the learner's first observation of the next game, with the final
observation in ``info["final_obs"]`` (an object array, set where ``info["_final_obs"]``
is True). The legal actions are in ``info["action_mask"]`` (``(N, num_actions)``
bool) after every reset and step, and from :meth:`TrafficVectorEnv.action_masks`. An
illegal action raises ``ValueError`` naming the games (a batch cannot lose one game
for it, as the single-game env does): mask the logits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector.utils import batch_space


class TrafficVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games of ``game`` against ``opponents`` (see the module)."""

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP,
                "render_modes": []}

    def __init__(self, game: str, num_envs: int, opponents: str | Sequence[Any] | Any = "random",
                 num_players: int = 2, max_cycles: int | None = None, seed: int = 0,
                 torch_threads: int | None = 1, **options: Any):
        from trafficenvs.agents.sb3_bridge import SelfPlayVecEnv
        from trafficenvs.gym_envs import opponent_policies
        from trafficenvs.registry import make_game

        g = make_game(game, num_players=num_players, **options)
        pols = opponent_policies(opponents, g, seed)
        self._vec = SelfPlayVecEnv(game, num_envs, pols, max_cycles=max_cycles, seed=seed,
                                   num_players=num_players, torch_threads=torch_threads,
                                   **options)
        self.num_envs = num_envs
        self.single_observation_space = g.observation_box()
        self.single_action_space = gymnasium.spaces.Discrete(g.num_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.game = self._vec.game

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start every game (game ``i`` from seed ``seed + i``, the learner's seat
        rotating over the rows); the learner's first observations and the masks."""
        super().reset(seed=seed)
        if seed is not None:
            self._vec.seed(int(seed))
        elif self._vec._seeds[0] is None and self._vec._default_seed is None:  # noqa: SLF001
            self._vec.seed(int(self.np_random.integers(2**62)))
        obs = self._vec.reset()
        return obs, {"action_mask": self._vec.action_masks(),
                     "learner_seat": self._vec.learner_seat.copy()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """One learner decision in every game, then the opponents' moves up to the
        learner's next decision (or the end of the game, then the next game's start)."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} ints (one per game), got "
                             f"{acts.dtype} of shape {acts.shape}")
        obs, rewards, done, infos = self._vec.step(acts.astype(np.int64))
        trunc = np.array([bool(infos[i].get("TimeLimit.truncated", False)) if done[i]
                          else False for i in range(self.num_envs)])
        term = done & ~trunc
        info: dict[str, Any] = {"action_mask": self._vec.action_masks(),
                                "learner_seat": self._vec.learner_seat.copy()}
        if done.any():
            final = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final[i] = infos[i]["terminal_observation"]
            info["final_obs"] = final
            info["_final_obs"] = done.copy()
            episode_r = np.zeros(self.num_envs)
            episode_l = np.zeros(self.num_envs, np.int64)
            for i in np.flatnonzero(done):
                episode_r[i] = infos[i]["episode"]["r"]
                episode_l[i] = infos[i]["episode"]["l"]
            info["episode"] = {"r": episode_r, "l": episode_l, "_r": done.copy(),
                               "_l": done.copy()}
            info["_episode"] = done.copy()
        return obs, rewards.astype(np.float32), term, trunc, info

    def action_masks(self) -> np.ndarray:
        """``(num_envs, num_actions)`` bool: the learner's legal actions in each game."""
        return self._vec.action_masks()

    def close_extras(self, **kwargs: Any) -> None:
        self._vec.close()


def make_vector_env(num_envs: int, game: str, opponents: Any = "random", num_players: int = 2,
                    max_cycles: int | None = None, seed: int = 0,
                    max_episode_steps: int | None = None, **options: Any) -> TrafficVectorEnv:
    """Gymnasium's ``vector_entry_point`` of every registered id (see the module).
    ``max_episode_steps`` (from the registration) is a cap on the learner's decisions
    per game: the env's move limit (``max_cycles`` moves per seat) is set to it when
    ``max_cycles`` is not given, so the games are cut off by the env itself."""
    if max_cycles is None and max_episode_steps is not None:
        max_cycles = int(max_episode_steps)
    return TrafficVectorEnv(game, num_envs, opponents=opponents, num_players=num_players,
                            max_cycles=max_cycles, seed=seed, **options)


__all__ = ["TrafficVectorEnv", "make_vector_env"]
