"""Traffic Jam: hidden, simultaneous card plays onto morning, day and night roads.

Rules: ``docs/rules/traffic_jam.md``. ``env()``/``raw_env()`` give the AEC env,
``vec_env()`` the vectorised one.
"""

from __future__ import annotations

from typing import Any

from trafficenvs.core.verbs import register_kernels
from trafficenvs.traffic_jam import kernels
from trafficenvs.traffic_jam.deck import load_deck
from trafficenvs.traffic_jam.game import TrafficJamGame

register_kernels(
    kernels.RECORD_DTYPE,
    init=kernels.init,
    step=kernels.step,
    is_legal=kernels.is_legal,
    legal_mask=kernels.legal_mask,
    observe=kernels.observe,
    current_player=kernels.current_player,
    is_over=kernels.is_over,
)


def env(**kwargs: Any):
    """The AEC env with PettingZoo's usual wrappers (like ``connect_four_v3.env()``)."""
    from trafficenvs.registry import make

    return make("traffic_jam", **kwargs)


def raw_env(**kwargs: Any):
    """The unwrapped AEC env (raises ``ValueError`` on illegal moves)."""
    from trafficenvs.registry import make

    return make("traffic_jam", wrapped=False, **kwargs)


def vec_env(num_envs: int, **kwargs: Any):
    from trafficenvs.registry import make_vec

    return make_vec("traffic_jam", num_envs=num_envs, **kwargs)


__all__ = ["TrafficJamGame", "env", "raw_env", "vec_env", "load_deck", "kernels"]
