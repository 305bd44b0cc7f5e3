"""The PettingZoo AEC adapter: one game (a batch of one) behind the AECEnv API.

Agents are ``player_0 .. player_{n-1}`` in seat order. Observations are dicts
``{"observation": uint8 (obs_dim,), "action_mask": int8 (num_actions,)}`` from
the observing agent's seat (C4); the mask is all zeros for an agent not on turn.

Illegal actions: the raw env raises ``ValueError`` and leaves the game unchanged.
:func:`wrap` (used by ``trafficenvs.make`` and each game's ``env()``) adds
PettingZoo's usual wrappers, where an illegal move ends the game with -1 for the
offender (``TerminateIllegalWrapper``), as in PettingZoo's classic games.

Truncation: after ``max_cycles`` moves per player (``max_cycles * num_players``
moves in all), or when a game option's own cap (turns, rounds) is reached, the game
is truncated and every player's reward is 0 (C2).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from trafficenvs.core import checks, driver
from trafficenvs.core.game import Game
from trafficenvs.core.guard import ThreadGuard, exclusive

RENDER_MODES = ["human", "ansi", "rgb_array"]


class TrafficAECEnv(AECEnv):
    """A turn-based (AEC) PettingZoo env for any registered :class:`Game`."""

    metadata: dict[str, Any] = {
        "render_modes": RENDER_MODES,
        "name": "trafficenvs",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        game: Game,
        render_mode: str | None = None,
        max_cycles: int | None = None,
        render_seat: int | None = None,
    ):
        super().__init__()
        self._guard = ThreadGuard()  # one thread at a time (core/guard.py)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode must be one of {RENDER_MODES} or None, got {render_mode!r}"
            )
        # PettingZoo's style (connect_four_v3); make() accepts both spellings. A game whose
        # turns are simultaneous choices taken in seat order, revealed once all have chosen,
        # names its parallel env (``parallel_env_class``): aec_to_parallel may convert it
        self.metadata = dict(self.metadata, name=game.env_id().replace("-v", "_v"),
                             is_parallelizable=getattr(game, "parallel_env_class", None)
                             is not None)
        self.render_mode = render_mode
        if render_seat is not None:
            render_seat = checks.check_int(render_seat, "render_seat", 0, game.num_players - 1)
        self.render_seat = render_seat
        if max_cycles is None:
            max_cycles = game.default_max_cycles
        self.max_cycles = checks.check_int(max_cycles, "max_cycles", 1)
        self.max_moves = self.max_cycles * game.num_players
        game = game.with_horizon(self.max_moves)
        self.game = game
        checks.note_game(game)
        n = game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": game.observation_box(),
                "action_mask": spaces.Box(0, 1, (game.num_actions,), dtype=np.int8),
            }
        )
        act_space = spaces.Discrete(game.num_actions)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, act_space)
        self._recs = game.new_records(1)
        self._obs = np.zeros(game.obs_dim, game.obs_dtype)
        self._mask = np.zeros(game.num_actions, np.int8)
        #: draws the seed of a ``reset()`` without one (see :meth:`reset`)
        self.np_random: np.random.Generator | None = None
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -- the game --------------------------------------------------------------
    @property
    def record(self) -> np.void:
        """The game's record (read it, copy it; change it only via ``load_state_dict``)."""
        return self._recs[0]

    @exclusive
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a game: with ``seed`` (0..2**64-1), the game of that seed.

        Without ``seed``, the seed is drawn from ``np_random``, which the last
        ``reset(seed=s)`` seeded with ``s``: a seeded reset and the unseeded ones after
        it are reproducible (Gymnasium's rule). Before any seeded reset it draws from
        OS entropy.
        """
        seed = checks.next_seed(self, seed)
        driver.single_reset(self._recs, self.game.cfg, np.uint64(seed), self.game.num_players)
        self._start()

    def _start(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._sync_status()

    def _sync_status(self) -> None:
        cur, over, cut = driver.single_status(self._recs, self.game.cfg)
        rec = self._recs[0]
        self.agent_selection = self.possible_agents[cur]
        if over:
            self.terminations = dict.fromkeys(self.agents, True)
        elif cut or rec["moves"] >= self.max_moves:
            self.truncations = dict.fromkeys(self.agents, True)

    def _seat(self, agent: str) -> int:
        try:
            return self._index[agent]
        except (KeyError, TypeError):
            raise ValueError(f"agent must be one of {self.possible_agents}, "
                             f"got {agent!r}") from None

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat(agent)
        driver.single_observe(self._recs, self.game.cfg, seat, self._obs, self._mask)
        return {"observation": self._obs.copy(), "action_mask": self._mask.copy()}

    @exclusive
    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = -1 if action is None else self._action(action)
        if action is not None and not 0 <= a < self.game.num_actions:
            raise ValueError(f"illegal action {a} for {agent}: actions are "
                             f"0..{self.game.num_actions - 1}")
        if action is None or not driver.single_step(self._recs, self.game.cfg, a):
            raise ValueError(
                f"illegal action {action!r} for {agent}; legal: "
                f"{np.flatnonzero(self.observe(agent)['action_mask']).tolist()}"
            )
        self._cumulative_rewards[agent] = 0.0
        rew = self._recs[0]["reward"]
        self.rewards = {a: float(rew[i]) for i, a in enumerate(self.agents)}
        self._sync_status()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # -- state -----------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The whole game as a plain dict (see the game's rules page)."""
        return self.game.to_dict(self._recs[0])

    @exclusive
    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Set the game to ``state`` (validated); rewards and flags start afresh."""
        self._recs[:] = self.game.from_dict(state)
        self._start()

    def _action(self, action: Any) -> int:
        """An action as an int: ints, numpy ints and 0-d int arrays (not bools or floats)."""
        if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            return int(action)
        return checks.check_int(action, "action")

    def action_name(self, action: int) -> str:
        a = checks.check_int(self._action(action), "action", 0, self.game.num_actions - 1)
        return self.game.action_name(self._recs[0], a)

    # -- rendering -------------------------------------------------------------
    def render(self) -> Any:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        rec = self._recs[0]
        if self.render_mode == "rgb_array":
            return self.game.render_rgb(rec, self.render_seat)
        text = self.game.render_ansi(rec, self.render_seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _repr_png_(self) -> bytes | None:
        """A notebook cell showing the env draws the board (``render_seat``'s view;
        None before the first reset, so Jupyter shows the text repr instead)."""
        if not any(self._recs[0].tobytes()):  # never reset: all zeros, not a position
            return None
        import io

        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(self.game.render_rgb(self._recs[0], self.render_seat)).save(
            buf, format="PNG")
        return buf.getvalue()

    def close(self) -> None:
        pass


class TerminateIllegalWrapper(wrappers.TerminateIllegalWrapper):
    """PettingZoo's wrapper, which caches the mover's mask when it is observed, and
    forgets that cache (and an earlier illegal-move ending) when a state is loaded: a
    move legal in the loaded position is accepted."""

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.env.load_state_dict(state)
        self._prev_obs = None
        self._prev_info = None
        self._terminated = False


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's wrapper, for which loading a state counts as a reset (the env is
    ready to step from the loaded position). PettingZoo's wrappers refuse attributes
    starting with ``_``, so the notebook display is passed through here."""

    def _repr_png_(self) -> bytes | None:
        return self.unwrapped._repr_png_()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.env.load_state_dict(state)
        self._has_reset = True
        self._has_updated = True


def wrap(env: TrafficAECEnv) -> AECEnv:
    """PettingZoo's usual wrappers for classic games (see the module docstring), with
    ``load_state_dict`` passed through them (each wrapper resets what it caches)."""
    env = TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return OrderEnforcingWrapper(env)
