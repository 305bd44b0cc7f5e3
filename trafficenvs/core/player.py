"""What every rule-based ("greedy") player shares: one game kind, one compiled call per batch.

Each game's greedy player lives in its own package (``<game>/greedy.py``) and is
named in its :class:`~trafficenvs.core.spec.GameSpec`; it subclasses
:class:`GreedyPlayer` and implements ``_act``. This base holds what is the same for
all of them, so it sits in ``core`` (below the games) rather than in ``agents``
(above them): the :class:`~trafficenvs.agents.policy.Policy` interface it satisfies.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from trafficenvs.core.game import Game


class GreedyPlayer(ABC):
    """Base of the rule-based players (the :class:`~trafficenvs.agents.policy.Policy`
    interface): checks the game kind once, and turns a batch into contiguous arrays
    for the subclass's compiled loop, which writes one action per row into ``out``.
    """

    #: the ``Game.name`` this player plays
    game_name: str = ""
    def __init__(self, game: Game, seed: int | None = None, name: str = "greedy"):
        if game.name != self.game_name:
            raise ValueError(f"{type(self).__name__} plays {self.game_name}, not {game.name}")
        self.name = name
        self.game = game
        self.num_players = game.num_players

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, current_player: np.ndarray
    ) -> np.ndarray:
        obs = np.ascontiguousarray(observation, self.game.obs_dtype)
        mask = np.ascontiguousarray(action_mask, np.bool_)
        g = self.game
        if obs.ndim != 2 or obs.shape[1] != g.obs_dim or mask.shape != (obs.shape[0],
                                                                         g.num_actions):
            # the compiled loops read fields at layout offsets: a short row would be
            # read past its end
            raise ValueError(f"{self.name}: observation must be (B, {g.obs_dim}) and "
                             f"action_mask (B, {g.num_actions}), got {obs.shape} and "
                             f"{mask.shape}")
        out = np.zeros(obs.shape[0], np.int64)
        if len(out):
            self._act(obs, mask, out)
        return out

    def rollout_scratch(self, b: int) -> tuple[np.ndarray, ...]:
        """The ``gs`` scratch tuple of the game's ``greedy`` verb (``core/verbs.py``: the
        player as a kernel, for search agents' rollouts) for ``b`` rows."""
        raise NotImplementedError(f"{type(self).__name__} plays no rollouts")

    @abstractmethod
    def _act(self, obs: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None:
        """Write the action of every row of ``obs``/``mask`` (both contiguous) into ``out``."""
