"""Driving (K6) and what happens where the moped parks (K7): the drive along a path,
the detour dice, and the encounters in the rulebook's order (marker, chat, charging,
an order stack, a building).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.core.rng import rng_below
from trafficenvs.jakarta_traffic.rules.board import stack_at
from trafficenvs.jakarta_traffic.rules.layout import (
    ACCEPT,
    BUBBLE_BONUS,
    CHARGING,
    DELIVER,
    DETOUR_PICK,
    MAX_BUBBLES,
    MAX_ENERGY,
    PICKUP,
    SIDE,
)
from trafficenvs.jakarta_traffic.rules.orders import can_accept, deliverable
from trafficenvs.jakarta_traffic.rules.scoring import end_turn


@kernel
def roll_die(rec):
    """One die (1-6): the next forced value if a test or user queued one, else the RNG."""
    if rec.forced_n > 0:
        d = rec.forced[0]
        for i in range(rec.forced_n - 1):
            rec.forced[i] = rec.forced[i + 1]
        rec.forced_n -= 1
        rec.forced[rec.forced_n] = 0
        return np.int64(d)
    return rng_below(rec, 6) + 1


@kernel
def drive(rec, cfg, e):
    """K6: drive out of edge ``e`` of the mover's tile and park where the path ends."""
    park(rec, cfg, rec.dest[e])


@kernel
def detour(rec, cfg):
    """K6 detour: column die, row die; a 6 copies the other; a double 6 lets the mover
    pick the cell (phase ``detour_pick``)."""
    c = roll_die(rec)
    r = roll_die(rec)
    rec.dice[0] = c
    rec.dice[1] = r
    if c == 6 and r == 6:
        rec.phase = DETOUR_PICK
        return
    if c == 6:
        c = r
    elif r == 6:
        r = c
    park(rec, cfg, (r - 1) * SIDE + (c - 1))


@kernel
def chat(rec, cfg, p, x):
    """K7 chat: if competitors' mopeds are on ``x``, each of them gains 1 energy, the
    mover 1 energy and a speech bubble (all capped)."""
    others = 0
    for q in range(cfg.num_players):
        if q != p and rec.pos[q] == x:
            others += 1
            if rec.energy[q] < MAX_ENERGY:
                rec.energy[q] += 1
    if others > 0:
        if rec.energy[p] < MAX_ENERGY:
            rec.energy[p] += 1
        if rec.bubbles[p] < MAX_BUBBLES:
            rec.bubbles[p] += 1
            if cfg.shaping:
                rec.reward[p] += BUBBLE_BONUS[rec.bubbles[p]] - BUBBLE_BONUS[rec.bubbles[p] - 1]


@kernel
def park(rec, cfg, x):
    """K7: every encounter where the mover parks, in the rulebook's order; a stop that
    offers a choice sets its phase, else the turn ends."""
    p = rec.cur
    rec.pos[p] = x
    if rec.marker == x:
        rec.marker = -1
    chat(rec, cfg, p, x)
    kind = cfg.tile_kind[rec.cell_tile[x]]
    if kind == CHARGING:
        rec.energy[p] = MAX_ENERGY
    elif kind == PICKUP:
        t = stack_at(rec, x)
        if t >= 0 and can_accept(rec, p, t):
            rec.phase = ACCEPT
            rec.pending = t
            return
    elif x != rec.start and rec.energy[p] >= 1 and deliverable(rec, cfg, p, x) != 0:
        rec.phase = DELIVER
        return
    end_turn(rec, cfg)
