"""Gymnasium ids for the single-learner view of every game.

A Gymnasium user (one agent, the other seats played inside the env) writes::

    import gymnasium, trafficenvs
    env = gymnasium.make("trafficenvs/TrafficJam-v1", opponents="greedy", num_players=3)
    obs, info = env.reset(seed=0)
    mask = info["action_mask"]          # also env.unwrapped.action_masks()

    venv = gymnasium.make_vec("trafficenvs/JammingTraffic-v1", num_envs=4096,
                              opponents="random")   # the numba batch (gym_vector.py)

The env is :class:`~trafficenvs.agents.sb3_bridge.SingleGameEnv`: the learner's
seat rotates from game to game, the opponents move inside ``step``, an illegal
action ends the episode with -1 (so mask-blind tools such as ``check_env`` can drive
it), and the legal actions are in ``info["action_mask"]`` after every reset and step
and from ``action_masks()`` (sb3-contrib's MaskablePPO reads that).

Ids are ``trafficenvs/<Title>-v<version>`` (the title without spaces, the current
observation version); importing :mod:`trafficenvs` registers them, and
``gymnasium.make("trafficenvs:trafficenvs/TrafficJam-v1")`` imports it first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trafficenvs.core.spec import GameSpec, specs


def gymnasium_id(spec: GameSpec) -> str:
    """``trafficenvs/TrafficJam-v1`` for Traffic Jam at version 1."""
    return f"trafficenvs/{spec.title.replace(' ', '')}-v{spec.version}"


def make_single_env(game: str, opponents: str | Sequence[str] | Any = "random",
                    num_players: int = 2, max_cycles: int | None = None, seed: int = 0,
                    **options: Any) -> Any:
    """The single-learner env of ``game`` against ``opponents``.

    ``opponents``: an agent spec as on the command line (``"greedy"``,
    ``"random,greedy"``, ``"flatmc:n=8"``, ``"ppo:PATH"``), a list of specs, or policy
    objects; each new game draws one of them for all the other seats. ``seed`` seeds
    the opponents' own generators (the games are seeded by ``reset(seed=...)``).
    """
    from trafficenvs.agents.sb3_bridge import SingleGameEnv
    from trafficenvs.registry import make_game

    g = make_game(game, num_players=num_players, **options)
    return SingleGameEnv(game, opponent_policies(opponents, g, seed), max_cycles=max_cycles,
                         num_players=num_players, **options)


def opponent_policies(opponents: str | Sequence[str] | Any, game: Any, seed: int) -> list[Any]:
    """``opponents`` (specs as on the command line, a list of them, or policy objects)
    as policies for ``game``, each seeded from ``seed``."""
    from trafficenvs.agents.zoo import make_agent, split_agent_specs

    if isinstance(opponents, str):
        opponents = split_agent_specs(opponents)
        if not opponents:
            raise ValueError("opponents: name at least one agent (e.g. 'random' or 'greedy')")
    if not isinstance(opponents, Sequence) or hasattr(opponents, "act"):
        opponents = [opponents]
    return [make_agent(o, game, seed=seed + 1000 * k) if isinstance(o, str) else o
            for k, o in enumerate(opponents)]


def register_gymnasium() -> list[str]:
    """Register every game's id with Gymnasium (idempotent); the ids."""
    import gymnasium

    ids = []
    for spec in specs():
        env_id = gymnasium_id(spec)
        if env_id not in gymnasium.registry:
            # max_episode_steps: the learner's decisions in one game, at most the game's
            # default move limit per seat (the env cuts the game there itself)
            gymnasium.register(id=env_id, entry_point="trafficenvs.gym_envs:make_single_env",
                               vector_entry_point="trafficenvs.gym_vector:make_vector_env",
                               max_episode_steps=spec.load().default_max_cycles,
                               kwargs={"game": spec.name}, disable_env_checker=False)
        ids.append(env_id)
    return ids
