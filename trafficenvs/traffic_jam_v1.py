"""Traffic Jam, observation version 1, PettingZoo style: ``from trafficenvs import traffic_jam_v1``.

``traffic_jam_v1.env()`` is the AEC env with PettingZoo's usual wrappers (as
``connect_four_v3.env()``), ``raw_env()`` the unwrapped one, ``vec_env(num_envs)`` the
vectorised batch, ``parallel_env()`` the parallel env (its stages are simultaneous
choices). Keyword arguments are the game's options (see
``trafficenvs.make``). The module's version is the observation version: a change of
observations adds a ``traffic_jam_v2`` module and keeps this one until it is retired.

**The parallel env**, ``TrafficJamParallelEnv``, is defined here: every seat chooses at
once, as at the table.

Why a parallel env: both stages of a trip are simultaneous in the rulebook (T3: every
player picks a card face down, then all are revealed; then every player picks a car and
a surprise face down, then all are revealed). The AEC env takes those choices one seat
after another (C3); this env takes them as they are played, one ``step(actions)`` per
stage with one action from every agent, so a parallel learner (RLlib, TorchRL, a
``parallel_api_test``) gets one decision per agent per step, each made from the view
every seat had at the moment of the simultaneous choice.

**A step** is one stage: ``actions`` holds exactly one action for every agent in
``env.agents`` (all of them, every step: in Traffic Jam no seat ever sits a stage out,
so no agent is ever without a choice). A game is 12 steps (3 rounds x 2 trips x 2
stages), whatever the number of players; after the step that ends it (or cuts it off,
``max_cycles``) ``env.agents`` is empty and the next call is ``reset()``.

**Observations**: ``{"observation": uint8 (obs_dim,), "action_mask": int8
(num_actions,)}`` per agent, the AEC env's layout (``docs/rules/traffic_jam.md``). The
observation is the AEC env's ``observe(agent)`` at the start of the stage (before any
seat has chosen); the mask is that agent's legal choices in the stage, which is the mask
the AEC env shows the agent on its turn (legality reads only one's own hand). Each agent's
arrays are its own (no shared buffer through which another seat's hand could be read).

What the AEC env shows between seats' choices, and this env does not: while the seats of a
stage choose in turn, the AEC env's ``observe`` tells a later seat which earlier seats have
already put their card(s) down (``seats.picked``) and, under a move limit, ticks the clock
(``horizon_left``) once per seat. Neither says *what* was chosen (the kernels read only the
chooser's own hand, tested), but both say something a simultaneous choice cannot know;
here every seat chooses from the stage-start view, where nobody has picked yet.

**Illegal actions** (an action in range that the agent's mask forbids): with
``illegal_reward`` a number (default ``-1.0``) the game ends as under the AEC env's wrapper
(PettingZoo's ``TerminateIllegalWrapper``): nothing of the stage is played, every agent is
terminated *and* truncated (the wrapper sets both), each offender gets ``illegal_reward``
and everyone else 0. Where the AEC env stops at the first offender in seat order, here all
offenders of the stage are charged (no seat chose first). With ``illegal_reward=None`` an
illegal action raises ``ValueError`` (naming the agent and its legal actions) and nothing
changes, as the raw AEC env does. Bad input is an error whatever ``illegal_reward`` is
(it is not a move, so it does not end the game): ``actions`` not a mapping, or an action
that is not an int (bools, floats, strings, None), is a ``TypeError``; a missing or
unknown agent, or an action outside ``0..num_actions - 1``, is a ``ValueError``; the env
is unchanged. ``step`` before ``reset`` or after the game's end is a ``RuntimeError``.

**Seeding** is the AEC env's (``trafficenvs.core.driver.next_seed``): ``reset(seed=s)``
plays the game of seed ``s`` (the same cards as ``trafficenvs.make(...).reset(seed=s)``),
and unseeded resets after it continue that seeded stream.

Conversions: ``pettingzoo.utils.parallel_to_aec(env)`` gives an AEC view of this env, and
``aec_to_parallel(trafficenvs.make("traffic_jam-v1"))`` (the AEC env says
``is_parallelizable``) gives the same games as this env; ``docs/rules/traffic_jam.md``
(Parallel API) says how their masks differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from trafficenvs.core import checks, driver
from trafficenvs.core.aec import RENDER_MODES
from trafficenvs.registry import entry_points, make_parallel
from trafficenvs.traffic_jam.game import TrafficJamGame
from trafficenvs.traffic_jam.rules import stages as PK

ObsDict = dict[str, np.ndarray]


class TrafficJamParallelEnv(ParallelEnv):
    """Traffic Jam with every agent's choice of a stage taken in one ``step`` (see the
    module docstring). Make it with ``trafficenvs.make_parallel("traffic_jam-v1", ...)``
    or :func:`parallel_env`; the game's options are those of the AEC env."""

    metadata: dict[str, Any] = {
        "render_modes": RENDER_MODES,
        "name": "traffic_jam_v1",
        "is_parallelizable": True,
        "render_fps": 2,
    }

    def __init__(
        self,
        game: TrafficJamGame,
        render_mode: str | None = None,
        max_cycles: int | None = None,
        render_seat: int | None = None,
        illegal_reward: float | None = -1.0,
    ):
        if not isinstance(game, TrafficJamGame):
            raise TypeError(f"game must be a TrafficJamGame (trafficenvs.make_game("
                            f"'traffic_jam-v1', ...)), got {checks.describe(game)}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode must be one of {RENDER_MODES} or None, got {render_mode!r}")
        self.render_mode = render_mode
        if render_seat is not None:
            render_seat = checks.check_int(render_seat, "render_seat", 0, game.num_players - 1)
        self.render_seat = render_seat
        if illegal_reward is not None:
            if isinstance(illegal_reward, (bool, np.bool_)) or not isinstance(
                    illegal_reward, (int, float, np.integer, np.floating)) \
                    or not np.isfinite(illegal_reward):
                raise TypeError(f"illegal_reward must be a finite number or None, "
                                f"got {checks.describe(illegal_reward)}")
            illegal_reward = float(illegal_reward)
        self.illegal_reward = illegal_reward
        self.metadata = dict(self.metadata, name=game.env_id().replace("-v", "_v"))
        self._base_game = game
        n = game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self.max_cycles = game.default_max_cycles if max_cycles is None else max_cycles
        obs_space = spaces.Dict({
            "observation": game.observation_box(),
            "action_mask": spaces.Box(0, 1, (game.num_actions,), dtype=np.int8),
        })
        act_space = spaces.Discrete(game.num_actions)
        # one space object per agent, the same at every call (parallel_api_test checks it)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, act_space)
        self._recs = game.new_records(1)
        self._obs = np.zeros((n, game.obs_dim), game.obs_dtype)
        self._mask = np.zeros((n, game.num_actions), np.int8)
        self._acts = np.zeros(n, np.int64)
        self._bad = np.zeros(n, np.bool_)
        self._rew = np.zeros(n, np.float64)
        self._has_reset = False
        #: draws the seed of a ``reset()`` without one (``checks.next_seed``)
        self.np_random: np.random.Generator | None = None
        self.agents: list[str] = []

    # -- configuration -----------------------------------------------------------
    @property
    def max_cycles(self) -> int:
        """The move limit in steps (stages): the game is truncated, reward 0 for all (C2),
        after ``max_cycles`` steps, i.e. ``max_cycles`` moves per player as in the AEC env.

        Settable (``parallel_api_test`` sets it): the limit and the clock the observation
        shows (``horizon_left``) follow at once. A Traffic Jam game is 12 steps, so the
        default (10,000) never cuts."""
        return self._max_cycles

    @max_cycles.setter
    def max_cycles(self, value: int) -> None:
        self._max_cycles = checks.check_int(value, "max_cycles", 1)
        self.max_moves = self._max_cycles * self._base_game.num_players
        # the AEC env's configuration for the same limit: the same clock in the observations
        self.game = self._base_game.with_horizon(self.max_moves)
        checks.note_game(self.game)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[self.possible_agents[self._seat(agent)]]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[self.possible_agents[self._seat(agent)]]

    def _seat(self, agent: Any) -> int:
        try:
            return self._index[agent]
        except (KeyError, TypeError):
            raise ValueError(f"agent must be one of {self.possible_agents}, "
                             f"got {agent!r}") from None

    # -- the game ----------------------------------------------------------------
    @property
    def record(self) -> np.void:
        """The game's record (read it, copy it; change it only via ``load_state_dict``)."""
        return self._recs[0]

    def reset(self, seed: int | None = None, options: dict | None = None
              ) -> tuple[dict[str, ObsDict], dict[str, dict]]:
        """Start a game: with ``seed`` (0..2**64-1) the game of that seed, the one the AEC
        env deals for it. Without ``seed``, the seed is drawn from ``np_random``, which the
        last ``reset(seed=s)`` seeded with ``s`` (reproducible; OS entropy before any seeded
        reset). ``options`` is accepted and unused (the game's options are fixed at
        construction). Returns every agent's observation and an empty info dict each."""
        seed = checks.next_seed(self, seed)
        driver.single_reset(self._recs, self.game.cfg, np.uint64(seed), self.game.num_players)
        return self._start()

    def _start(self) -> tuple[dict[str, ObsDict], dict[str, dict]]:
        self._has_reset = True
        self.agents = self.possible_agents[:]
        return self._observations(live=True), {a: {} for a in self.agents}

    def _observations(self, live: bool) -> dict[str, ObsDict]:
        """Every agent's observation and mask, one array each of its own: a shared buffer
        would let an agent read another seat's row (its hand) through ``.base``."""
        PK.observe_all(self._recs, self.game.cfg, self._obs, self._mask, live)
        return {a: {"observation": self._obs[i].copy(), "action_mask": self._mask[i].copy()}
                for i, a in enumerate(self.possible_agents)}

    def step(self, actions: Mapping[str, Any]) -> tuple[
            dict[str, ObsDict], dict[str, float], dict[str, bool], dict[str, bool],
            dict[str, dict]]:
        """One stage: every agent's choice at once (module docstring: what is checked,
        how an illegal action ends the game). Returns PettingZoo's five dicts, keyed by
        the agents that were live at the start of the step."""
        if not self._has_reset:
            raise RuntimeError("reset() must be called before step()")
        if not self.agents:
            raise RuntimeError("the game is over (no agents are live): call reset()")
        self._read_actions(actions)
        cfg = self.game.cfg
        agents = self.agents
        if PK.stage_illegal(self._recs, cfg, self._acts, self._bad):
            return self._illegal()
        PK.stage_step(self._recs, cfg, self._acts, self._rew)
        _, over, cut = driver.single_status(self._recs, cfg)
        over = bool(over)
        cut = not over and (bool(cut) or int(self._recs[0]["moves"]) >= self.max_moves)
        obs = self._observations(live=not (over or cut))
        rewards = {a: float(self._rew[i]) for i, a in enumerate(agents)}
        terms = dict.fromkeys(agents, over)
        truncs = dict.fromkeys(agents, cut)
        infos: dict[str, dict] = {a: {} for a in agents}
        if over or cut:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terms, truncs, infos

    def _read_actions(self, actions: Any) -> None:
        """``actions`` into ``self._acts`` (int64, seat order), or a clear error; nothing
        of the game changes before every action has passed."""
        if not isinstance(actions, Mapping):
            raise TypeError(f"actions must be a dict of one action per agent "
                            f"({self.agents}), got {checks.describe(actions)}")
        if len(actions) != len(self.agents) or any(a not in actions for a in self.agents):
            missing = [a for a in self.agents if a not in actions]
            extra = [a for a in actions if a not in self._index]
            if extra:
                raise ValueError(f"unknown agents {extra!r} in actions; the agents are "
                                 f"{self.agents}")
            if missing:
                raise ValueError(f"no action for {missing}: every agent chooses in every "
                                 f"stage (actions must hold one for each of {self.agents})")
            raise ValueError(f"actions for agents that are not live: "
                             f"{[a for a in actions if a not in self.agents]}")
        top = self.game.num_actions - 1
        acts = self._acts
        for i, agent in enumerate(self.possible_agents):
            v = actions[agent]
            if type(v) is int and 0 <= v <= top:  # the common case, checked cheaply
                acts[i] = v
                continue
            if isinstance(v, np.ndarray) and v.shape == () and v.dtype.kind in "iu":
                v = int(v)
            if v is None:
                raise TypeError(f"the action of {agent} is None: every agent chooses in "
                                f"every stage (an int in 0..{top})")
            acts[i] = checks.check_int(v, f"the action of {agent}", 0, top)

    def _illegal(self) -> tuple[dict[str, ObsDict], dict[str, float], dict[str, bool],
                                dict[str, bool], dict[str, dict]]:
        agents = self.agents
        bad = [a for i, a in enumerate(self.possible_agents) if self._bad[i]]
        if self.illegal_reward is None:
            legal = {}
            PK.observe_all(self._recs, self.game.cfg, self._obs, self._mask, True)
            for a in bad:
                i = self._index[a]
                legal[a] = np.flatnonzero(self._mask[i]).tolist()
            detail = "; ".join(f"{a} chose {int(self._acts[self._index[a]])}, legal: {legal[a]}"
                               for a in bad)
            raise ValueError(f"illegal actions ({detail}); nothing was played")
        gymnasium.logger.warn(f"illegal action by {bad}: the game ends ({self.illegal_reward} "
                              f"for each offender, 0 for the others)")
        rewards = {a: (self.illegal_reward if a in bad else 0.0) for a in agents}
        obs = self._observations(live=False)
        flags = dict.fromkeys(agents, True)
        infos: dict[str, dict] = {a: {} for a in agents}
        self.agents = []
        return obs, rewards, flags, dict(flags), infos

    # -- state ---------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The whole game as a plain dict (the rules page's State dict)."""
        return self.game.to_dict(self._recs[0])

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Set the game to ``state`` (validated), at the start of a stage (``to_move``
        0: a position where some seats have chosen and others not has no parallel
        step); every agent is live unless the state is over. Then call ``step``; the
        observations are those of :meth:`observe`."""
        recs = self.game.from_dict(state)
        if int(recs[0]["cur"]) != 0:
            raise ValueError(f"state dict: to_move is {int(recs[0]['cur'])}; a parallel env "
                             f"loads positions at the start of a stage (to_move 0), where "
                             f"every seat is still to choose")
        self._recs[:] = recs
        self._start()
        if bool(recs[0]["over"]):
            self.agents = []

    def observe(self, agent: str) -> ObsDict:
        """``agent``'s observation and mask now (the ones the last ``reset``/``step``
        returned for it)."""
        i = self._seat(agent)
        live = bool(self.agents)
        PK.observe_all(self._recs, self.game.cfg, self._obs, self._mask, live)
        return {"observation": self._obs[i].copy(), "action_mask": self._mask[i].copy()}

    def action_name(self, action: int) -> str:
        """A readable name of ``action`` (e.g. ``"play morning van (4)"``)."""
        a = checks.check_int(action, "action", 0, self.game.num_actions - 1)
        return self.game.action_name(self._recs[0], a)

    # -- rendering -------------------------------------------------------------------
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

    def close(self) -> None:
        pass


env, raw_env, vec_env = entry_points("traffic_jam")


def parallel_env(**kwargs: Any) -> ParallelEnv:
    """The parallel env: one ``step`` per stage, every player's action at once (the game's
    options and ``render_mode``, ``max_cycles``, ``render_seat``, ``illegal_reward`` as
    ``trafficenvs.make_parallel("traffic_jam-v1", ...)`` takes them)."""
    return make_parallel("traffic_jam", **kwargs)


__all__ = ["env", "raw_env", "vec_env", "parallel_env", "TrafficJamParallelEnv"]
