"""Jakarta Traffic: drive a moped through a maze of turning street tiles, deliver orders.

Rules: ``docs/rules/jakarta_traffic.md``. ``env()``/``raw_env()`` give the AEC env,
``vec_env()`` the vectorised one; ``load_tiles`` reads and checks a tile set.
"""

from __future__ import annotations

from typing import Any

from trafficenvs.core.verbs import register_kernels
from trafficenvs.jakarta_traffic import kernels
from trafficenvs.jakarta_traffic.game import JakartaTrafficGame
from trafficenvs.jakarta_traffic.tiles import load_tiles

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

    return make("jakarta_traffic", **kwargs)


def raw_env(**kwargs: Any):
    """The unwrapped AEC env (raises ``ValueError`` on illegal moves)."""
    from trafficenvs.registry import make

    return make("jakarta_traffic", wrapped=False, **kwargs)


def vec_env(num_envs: int, **kwargs: Any):
    """``num_envs`` games stepped together by the compiled batched drivers."""
    from trafficenvs.registry import make_vec

    return make_vec("jakarta_traffic", num_envs=num_envs, **kwargs)


__all__ = ["JakartaTrafficGame", "env", "raw_env", "vec_env", "load_tiles", "kernels"]
