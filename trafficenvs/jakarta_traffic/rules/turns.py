"""Jakarta Traffic's turn flow (K4-K9): the seat to move, a decision, the end.

``init`` (the set-up) lives in ``setup.py``; a decision's parts in ``honk.py`` (K5),
``drive.py`` (K6, K7), ``orders.py`` (K7, K8) and ``scoring.py`` (K9).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.rules.drive import detour, drive, park
from trafficenvs.jakarta_traffic.rules.honk import rotate, swap
from trafficenvs.jakarta_traffic.rules.layout import (
    A_ACCEPT,
    A_CELL,
    A_DECLINE,
    A_DELIVER,
    A_DETOUR,
    A_DRIVE,
    A_ROTATE,
    A_SWAP,
    DETOUR_PICK,
)
from trafficenvs.jakarta_traffic.rules.orders import (
    accept,
    deliver,
    place_stack,
)
from trafficenvs.jakarta_traffic.rules.scoring import end_turn


@kernel
def current_player(rec, cfg):
    return np.int64(rec.cur)


@kernel
def is_over(rec, cfg):
    return rec.over != 0


@kernel
def is_truncated(rec, cfg):
    """K9's round cap: ``max_rounds`` rounds played and the game not over (0: no cap)."""
    return cfg.max_rounds > 0 and rec.round >= cfg.max_rounds and rec.over == 0


@kernel
def step(rec, cfg, action):
    """Play ``action`` (legal, C3) for the mover; this step's rewards go to ``rec.reward``."""
    for j in range(cfg.num_players):
        rec.reward[j] = 0.0
    if action < A_SWAP:  # K5
        rotate(rec, cfg, action - A_ROTATE)
    elif action < A_DRIVE:  # K5
        swap(rec, cfg, action - A_SWAP)
    elif action < A_DETOUR:  # K6
        drive(rec, cfg, action - A_DRIVE)
    elif action == A_DETOUR:  # K6
        detour(rec, cfg)
    elif action < A_ACCEPT:
        if rec.phase == DETOUR_PICK:  # K6 double 6
            park(rec, cfg, action - A_CELL)
        else:  # K7
            place_stack(rec, cfg, action - A_CELL)
    elif action == A_ACCEPT:  # K7
        accept(rec, cfg)
    elif action == A_DECLINE:
        end_turn(rec, cfg)
    else:  # K7, K8
        deliver(rec, cfg, action - A_DELIVER)
        end_turn(rec, cfg)
