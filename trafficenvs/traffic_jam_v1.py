"""Traffic Jam, observation version 1, PettingZoo style: ``from trafficenvs import traffic_jam_v1``.

``traffic_jam_v1.env()`` is the AEC env with PettingZoo's usual wrappers (as
``connect_four_v3.env()``), ``raw_env()`` the unwrapped one, ``vec_env(num_envs)`` the
vectorised batch, ``parallel_env()`` the parallel env (its stages are simultaneous
choices). Keyword arguments are the game's options (see
``trafficenvs.make``). The module's version is the observation version: a change of
observations adds a ``traffic_jam_v2`` module and keeps this one until it is retired.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import ParallelEnv

from trafficenvs.registry import entry_points, make_parallel

env, raw_env, vec_env = entry_points("traffic_jam")


def parallel_env(**kwargs: Any) -> ParallelEnv:
    """The parallel env: one ``step`` per stage, every player's action at once."""
    return make_parallel("traffic_jam", **kwargs)


__all__ = ["env", "raw_env", "vec_env", "parallel_env"]
