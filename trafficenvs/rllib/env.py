"""``TrafficMultiAgentEnv``: one game as an RLlib ``MultiAgentEnv`` (new API stack).

Why not ``PettingZooEnv(trafficenvs.make(...))``: RLlib's default encoders cannot
take the AEC observation dict (``observation`` uint8 + ``action_mask`` int8), and
without the mask a policy makes illegal moves that end every game after one step.
Here the observation is what :class:`~trafficenvs.rllib.modules.MaskedPPOTorchRLModule`
reads: a Dict of ``observations`` (float32, each entry divided by its exact upper
bound from the game's layout, so every input lies in [0, 1]) and ``action_mask``
(float32, 1 = legal).

Turn order is the AEC env's: each step returns an observation only for the agent to
move, and a reward entry for *every* agent (0 while the game runs, unless shaping is
on), so RLlib's episode adds rewards earned while an agent waits to its pending
action. When the game ends (rules) or is cut off (move cap), every agent gets its
final observation, its reward and the end flag in the same step: RLlib needs a last
observation for each agent that acted, and C2's zero-sum result goes to all seats,
the agent that made the last move and the others alike.

Illegal actions (impossible through the masking module, possible for other
modules) end the game with -1 for the offender and 0 for the others, as PettingZoo's
wrapper does, and are counted in :attr:`TrafficMultiAgentEnv.illegal_actions` so
tests can check that none happened.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from trafficenvs.registry import game_name, make

#: keys an env config may have (RLlib passes ``env_config`` as one dict)
CONFIG_KEYS = ("game", "num_players", "max_cycles", "options")


def env_config(game: str, num_players: int = 2, max_cycles: int | None = None,
               **options: Any) -> dict[str, Any]:
    """The ``env_config`` dict for :class:`TrafficMultiAgentEnv` (game options, such as
    ``shaping=True``, go in ``options``)."""
    return {"game": game_name(game), "num_players": int(num_players),
            "max_cycles": max_cycles, "options": dict(options)}


def obs_scale(game: Any) -> np.ndarray:
    """float32 factors that map each observation entry onto [0, 1] (1 / its bound).

    Entries are small integers with exact bounds; dividing by the bound keeps one
    large count from dominating the first layer of a network trained from scratch,
    and the greedy players can undo it exactly (``rint(x / scale)``).
    """
    high = np.asarray(game.obs_high, np.float32)
    return (1.0 / np.maximum(high, 1.0)).astype(np.float32)


class TrafficMultiAgentEnv(MultiAgentEnv):
    """One trafficenvs game behind RLlib's ``MultiAgentEnv`` API.

    ``config`` is :func:`env_config`'s dict (RLlib's ``env_config``): ``game`` (an id
    as :func:`trafficenvs.make` takes it), ``num_players``, ``max_cycles``, ``options``.
    Agents are ``player_0 .. player_{n-1}`` in seat order.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"]}

    def __init__(self, config: dict[str, Any] | None = None):
        super().__init__()
        cfg = dict(config or {})
        unknown = sorted(set(cfg) - set(CONFIG_KEYS))
        if unknown:
            raise TypeError(f"TrafficMultiAgentEnv: unknown config keys {unknown}; "
                            f"valid keys are {list(CONFIG_KEYS)}")
        name = game_name(cfg.get("game", "traffic_jam"))
        self._aec = make(name, wrapped=False, max_cycles=cfg.get("max_cycles"),
                         num_players=int(cfg.get("num_players", 2)),
                         **dict(cfg.get("options") or {}))
        game = self._aec.game
        #: the :class:`~trafficenvs.core.game.Game` configuration played
        self.game = game
        self.game_name = name
        self.possible_agents = list(self._aec.possible_agents)
        self.agents = []
        self._done = True
        self._scale = obs_scale(game)
        n_act = game.num_actions
        space = gym.spaces.Dict({
            "observations": gym.spaces.Box(0.0, 1.0, (game.obs_dim,), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (n_act,), np.float32),
        })
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, gym.spaces.Discrete(n_act))
        self.observation_space = gym.spaces.Dict(self.observation_spaces)
        self.action_space = gym.spaces.Dict(self.action_spaces)
        #: illegal actions received since construction (each ended its game)
        self.illegal_actions = 0
        #: moves played since construction (env steps)
        self.env_steps = 0
        #: games finished since construction
        self.games = 0
        self._returns = dict.fromkeys(self.possible_agents, 0.0)

    # -- the MultiAgentEnv API -------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start a game (with ``seed``, the AEC env's game of that seed)."""
        self._aec.reset(seed=seed)
        self.agents = self.possible_agents[:]
        self._done = False
        self._returns = dict.fromkeys(self.possible_agents, 0.0)
        mover = self._aec.agent_selection
        return {mover: self._observe(mover)}, {mover: {}}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Play the mover's action from ``action_dict`` (other agents' are ignored)."""
        if self._done:
            raise RuntimeError("the game is over: call reset()")
        aec = self._aec
        mover = aec.agent_selection
        if mover not in action_dict:
            raise ValueError(f"{mover} is to move but action_dict has only "
                             f"{sorted(action_dict)}")
        self.env_steps += 1
        try:
            aec.step(int(action_dict[mover]))
        except ValueError:
            self.illegal_actions += 1
            rewards = {a: (-1.0 if a == mover else 0.0) for a in self.possible_agents}
            return self._finish(rewards, terminated=True, illegal=mover)
        rewards = {a: float(aec.rewards[a]) for a in self.possible_agents}
        term = aec.terminations[mover]
        trunc = aec.truncations[mover]
        if term or trunc:
            return self._finish(rewards, terminated=bool(term), illegal=None)
        for a, r in rewards.items():
            self._returns[a] += r
        nxt = aec.agent_selection
        return ({nxt: self._observe(nxt)}, rewards, {"__all__": False},
                {"__all__": False}, {})

    def _finish(self, rewards: dict[str, float], terminated: bool,
                illegal: str | None) -> tuple[dict, dict, dict, dict, dict]:
        """The last step: every agent's final view, reward, end flag and a summary."""
        for a, r in rewards.items():
            self._returns[a] += r
        self.games += 1
        rec = self._aec.record
        scores = np.asarray(self.game.scores(rec), float)
        obs = {a: self._observe(a) for a in self.possible_agents}
        infos = {a: {"return": self._returns[a], "score": float(scores[i]),
                     "illegal": illegal == a}
                 for i, a in enumerate(self.possible_agents)}
        flags = dict.fromkeys(self.possible_agents, True)
        done = {**flags, "__all__": True}
        off = {**dict.fromkeys(self.possible_agents, False), "__all__": False}
        # ``agents`` keeps the seats of the game just ended (RLlib checks the last
        # step's keys against it); ``reset`` starts the next game
        self._done = True
        if terminated:
            return obs, rewards, done, off, infos
        return obs, rewards, off, done, infos

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        o = self._aec.observe(agent)
        return {"observations": o["observation"].astype(np.float32) * self._scale,
                "action_mask": o["action_mask"].astype(np.float32)}

    def render(self) -> str:
        """The table as text (no hidden cards shown)."""
        return self.game.render_ansi(self._aec.record, None)

    def close(self) -> None:
        pass


def sample_summaries(env_runner: Any, num_episodes: int = 3) -> tuple[list[dict], int]:
    """Play ``num_episodes`` games on an RLlib env runner and describe them in plain data
    (picklable, for ``env_runner_group.foreach_env_runner``): per game each agent's
    return as RLlib's episode recorded it, its module, the env's last infos (the game's
    own return tally and scores) and whether the game ended by the rules; and the
    illegal actions all of the runner's envs have seen. Tests compare the two tallies."""
    out = []
    for ep in env_runner.sample(num_episodes=num_episodes, explore=True):
        out.append({
            "returns": {a: float(e.get_return()) for a, e in ep.agent_episodes.items()},
            "modules": {a: ep.module_for(a) for a in ep.agent_episodes},
            "infos": ep.get_infos(-1),
            "terminated": bool(ep.is_terminated),
        })
    illegal = sum(e.unwrapped.illegal_actions for e in env_runner.env.envs)
    return out, illegal


def register_envs() -> list[str]:
    """Register every game with RLlib by name, as RLlib users expect
    (``config.environment("trafficenvs/traffic_jam-v1", env_config=env_config(...))``);
    the names, the PettingZoo ids ``trafficenvs/<game>-v<version>``. The game is set
    by the name; ``env_config`` gives the players, the move limit and the options."""
    from ray.tune.registry import register_env

    from trafficenvs.core.spec import specs

    names = []
    for spec in specs():
        name = f"trafficenvs/{spec.env_id}"

        def create(config: Any, game: str = spec.name) -> TrafficMultiAgentEnv:
            return TrafficMultiAgentEnv({**dict(config or {}), "game": game})

        register_env(name, create)
        names.append(name)
    return names
