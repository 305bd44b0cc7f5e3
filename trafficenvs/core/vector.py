"""The vectorised env: the same turn-based game, ``num_envs`` at once.

Each call steps every game by one move of the player to move in that game. Game
``i`` of ``reset(seed=s)`` is the same game as an AEC env reset with ``seed=s+i``;
when a game ends it restarts at once with seed ``s + i + k*num_envs`` (k-th restart),
and that step still returns its rewards, its last observation in
``final_observation`` (from the seat that made the final move, or a seat you
choose) and a copy of its final record in ``final_records``.

Agents that hold one seat per game step only some games (``active``): the rows
where an opponent must move, say, while the others wait for the learner.

Speed: the arrays in the returned :class:`VecStep` are the env's own buffers,
written in place by the next ``reset``/``step`` (no copy per step). Call
``.copy()`` on the result to keep one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from trafficenvs.core import driver
from trafficenvs.core.game import Game


@dataclass
class VecStep:
    """What ``reset`` and ``step`` return; row ``i`` is game ``i``."""

    #: ``(N, obs_dim)`` ``game.obs_dtype`` (uint8), from the seat of ``current_player``
    observation: np.ndarray
    #: ``(N, num_actions)`` bool, legal actions of ``current_player``
    action_mask: np.ndarray
    #: ``(N,)`` int64, the seat to move
    current_player: np.ndarray
    #: ``(N, num_players)`` float32, this step's reward per seat (absolute seat order)
    rewards: np.ndarray
    #: ``(N,)`` bool, the game ended by the rules on this step (and was restarted)
    terminated: np.ndarray
    #: ``(N,)`` bool, the game hit the move limit or a game option's cap on this step
    #: (and was restarted)
    truncated: np.ndarray
    #: ``(N, obs_dim)`` ``game.obs_dtype``, valid in rows that ended on this step
    final_observation: np.ndarray
    #: ``(N,)`` game records, valid in rows that ended on this step: the final game
    #: (for scores and state dicts; ``env.game.scores(final_records[i])``)
    final_records: np.ndarray

    def copy(self) -> VecStep:
        return VecStep(**{f.name: getattr(self, f.name).copy() for f in fields(self)})


class TrafficVecEnv:
    """``num_envs`` games of one configuration, stepped by compiled batched drivers."""

    def __init__(self, game: Game, num_envs: int, max_cycles: int | None = None):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)):
            raise TypeError(f"num_envs must be an int, got {num_envs!r}")
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        if max_cycles is None:
            max_cycles = game.default_max_cycles
        if max_cycles <= 0:
            raise ValueError(f"max_cycles must be positive, got {max_cycles}")
        self.num_envs = int(num_envs)
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.observation_shape = (game.obs_dim,)
        self.max_cycles = int(max_cycles)
        self.max_moves = self.max_cycles * game.num_players
        game = game.with_horizon(self.max_moves)
        self.game = game
        n = self.num_envs
        self.records = game.new_records(n)
        self._seeds = np.zeros(n, np.uint64)
        self._buf = VecStep(
            observation=np.zeros((n, game.obs_dim), game.obs_dtype),
            action_mask=np.zeros((n, game.num_actions), np.bool_),
            current_player=np.zeros(n, np.int64),
            rewards=np.zeros((n, game.num_players), np.float32),
            terminated=np.zeros(n, np.bool_),
            truncated=np.zeros(n, np.bool_),
            final_observation=np.zeros((n, game.obs_dim), game.obs_dtype),
            final_records=game.new_records(n),
        )
        self._all = np.ones(n, np.bool_)
        self._mover = np.full(n, -1, np.int64)
        self._ready = False

    def reset(self, seed: int | None = None) -> VecStep:
        """Start every game; game ``i`` gets seed ``seed + i``."""
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
        elif not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        self._seeds[:] = np.uint64(seed) + np.arange(self.num_envs, dtype=np.uint64)
        b = self._buf
        driver.batch_reset(
            self.records, self.game.cfg, self._seeds, self.num_players,
            b.observation, b.action_mask, b.current_player,
        )
        b.rewards[:] = 0
        b.terminated[:] = False
        b.truncated[:] = False
        self._ready = True
        return b

    @property
    def last(self) -> VecStep:
        """The result of the last ``reset``/``step`` (the live buffers)."""
        return self._buf

    def step(
        self,
        actions: np.ndarray,
        active: np.ndarray | None = None,
        final_seat: np.ndarray | None = None,
    ) -> VecStep:
        """Play ``actions[i]`` in game ``i`` (for its player to move).

        ``active`` (bool per game, default all): only those games move; the others
        keep their state and rows, with zero rewards and no end flags, and their
        actions are ignored. ``final_seat`` (int per game, default -1 = the mover):
        whose view ``final_observation`` shows for a game that ends.
        Raises ``ValueError`` (changing nothing) if an active game's action is illegal.
        """
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        n = self.num_envs
        actions = np.asarray(actions)
        if actions.shape != (n,) or actions.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be an int array of shape ({n},), got {actions.dtype} {actions.shape}"
            )
        actions = actions.astype(np.int64, copy=False)
        active = self._all if active is None else self._per_game(active, np.bool_, "active")
        final_seat = (self._mover if final_seat is None
                      else self._per_game(final_seat, np.int64, "final_seat"))
        cfg = self.game.cfg
        if driver.count_illegal(self.records, cfg, actions, active):
            bad = list(driver.illegal_rows(self.records, cfg, actions, active))
            raise ValueError(f"illegal actions in games {bad[:10]}{'...' if len(bad) > 10 else ''}")
        b = self._buf
        driver.batch_step(
            self.records, cfg, actions, active, final_seat, self._seeds, np.uint64(n),
            self.max_moves, self.num_players, b.observation, b.action_mask, b.current_player,
            b.rewards, b.terminated, b.truncated, b.final_observation, b.final_records,
        )
        return b

    def _per_game(self, x: np.ndarray, dtype: type, name: str) -> np.ndarray:
        x = np.asarray(x)
        if x.shape != (self.num_envs,):
            raise ValueError(f"{name} must have shape ({self.num_envs},), got {x.shape}")
        return np.ascontiguousarray(x, dtype=dtype)

    def observe(self, seats: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Every game's observation from seat ``seats[i]`` (e.g. a learner's own view)."""
        seats = self._per_game(seats, np.int64, "seats")
        if seats.min(initial=0) < 0 or seats.max(initial=0) >= self.num_players:
            raise ValueError(f"seats must be in 0..{self.num_players - 1}")
        if out is None:
            out = np.zeros((self.num_envs, self.game.obs_dim), self.game.obs_dtype)
        driver.batch_observe(self.records, self.game.cfg, seats, out)
        return out

    # -- one game at a time, for people and tests ------------------------------
    def state_dict(self, i: int) -> dict[str, Any]:
        return self.game.to_dict(self.records[i])

    def load_state_dict(self, i: int, state: dict[str, Any]) -> None:
        """Replace game ``i`` by ``state``; refresh its row of the last result."""
        self.records[i : i + 1] = self.game.from_dict(state)
        b = self._buf
        driver.refresh_row(self.records, self.game.cfg, i, b.observation, b.action_mask,
                           b.current_player)
        self._ready = True

    def render(self, i: int = 0, mode: str = "ansi", seat: int | None = None) -> Any:
        rec = self.records[i]
        if mode == "ansi":
            return self.game.render_ansi(rec, seat)
        if mode == "rgb_array":
            return self.game.render_rgb(rec, seat)
        raise ValueError(f"mode must be 'ansi' or 'rgb_array', got {mode!r}")

    def close(self) -> None:
        pass
