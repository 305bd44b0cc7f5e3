"""The clock entries every v1 observation carries: how much of the move limit is left.

A game cut off by the envs' move limit (``max_cycles`` moves per player, C2) ends
with no result, so a player who can see the limit coming plays differently; at the
table everyone can count the moves. The envs store their limit in the game's
configuration record (``cfg.horizon``: moves of the whole game, ``0`` = no limit, set
by :meth:`~trafficenvs.core.game.Game.with_horizon`), and each game's ``observe``
writes :func:`horizon_left` into its ``horizon_left`` entry.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel

#: the value of a full horizon (and of "no limit"): the entry's exact upper bound
HORIZON_STEPS = 255


@kernel
def horizon_left(moves, horizon):
    """The share of the move limit still left, ``0..255`` (rounded up, so ``0`` only
    when the limit is reached; ``255`` for the whole limit left or no limit)."""
    if horizon <= 0:
        return np.uint8(HORIZON_STEPS)
    left = horizon - moves
    if left <= 0:
        return np.uint8(0)
    if left >= horizon:
        return np.uint8(HORIZON_STEPS)
    return np.uint8((left * HORIZON_STEPS + horizon - 1) // horizon)
