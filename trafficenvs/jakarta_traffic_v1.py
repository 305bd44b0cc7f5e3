"""Jakarta Traffic, observation version 1, PettingZoo style.

``from trafficenvs import jakarta_traffic_v1``: ``jakarta_traffic_v1.env()`` is the AEC env with
PettingZoo's usual wrappers (as ``connect_four_v3.env()``), ``raw_env()`` the unwrapped
one, ``vec_env(num_envs)`` the vectorised batch (a turn-based game has no parallel env).
Keyword arguments are the game's options (see ``trafficenvs.make``). The module's
version is the observation version: a change of observations adds a ``jakarta_traffic_v2``
module and keeps this one until it is retired.
"""

from __future__ import annotations

from trafficenvs.registry import entry_points

env, raw_env, vec_env = entry_points("jakarta_traffic")

__all__ = ["env", "raw_env", "vec_env"]
