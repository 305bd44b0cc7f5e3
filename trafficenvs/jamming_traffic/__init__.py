"""Jamming Traffic: steer cars along a map's roads; jams push them on, endlessly at times.

Rules: ``docs/rules/jamming_traffic.md``. ``env()``/``raw_env()`` give the AEC env,
``vec_env()`` the vectorised one, ``random_map()`` a seeded random planar map and
``load_map()`` a shipped or user map (a name, a JSON path or a dict).
"""

from __future__ import annotations

from typing import Any

from trafficenvs.core.verbs import register_kernels
from trafficenvs.jamming_traffic import kernels
from trafficenvs.jamming_traffic.game import JammingTrafficGame
from trafficenvs.jamming_traffic.maps import SHIPPED as MAPS
from trafficenvs.jamming_traffic.maps import Map, load_map, random_map

register_kernels(
    kernels.RECORD_DTYPE,
    init=kernels.init,
    step=kernels.step,
    is_legal=kernels.is_legal,
    legal_mask=kernels.legal_mask,
    observe=kernels.observe,
    current_player=kernels.current_player,
    is_over=kernels.is_over,
    is_truncated=kernels.is_truncated,
)


def env(**kwargs: Any):
    """The AEC env with PettingZoo's usual wrappers (like ``connect_four_v3.env()``)."""
    from trafficenvs.registry import make

    return make("jamming_traffic", **kwargs)


def raw_env(**kwargs: Any):
    """The unwrapped AEC env (raises ``ValueError`` on illegal moves)."""
    from trafficenvs.registry import make

    return make("jamming_traffic", wrapped=False, **kwargs)


def vec_env(num_envs: int, **kwargs: Any):
    """``num_envs`` games stepped together (see ``trafficenvs.make_vec``)."""
    from trafficenvs.registry import make_vec

    return make_vec("jamming_traffic", num_envs=num_envs, **kwargs)


__all__ = ["JammingTrafficGame", "Map", "MAPS", "env", "raw_env", "vec_env", "load_map",
           "random_map", "kernels"]
