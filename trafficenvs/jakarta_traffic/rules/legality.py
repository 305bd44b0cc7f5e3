"""Jakarta Traffic's legal actions (C3): ``is_legal`` for one action, ``legal_mask`` for all.
"""

from __future__ import annotations

from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.rules.board import (
    occupied_bits,
)
from trafficenvs.jakarta_traffic.rules.honk import honk_legal, honk_mask
from trafficenvs.jakarta_traffic.rules.layout import (
    A_ACCEPT,
    A_CELL,
    A_DECLINE,
    A_DELIVER,
    A_DETOUR,
    A_DRIVE,
    ACCEPT,
    DELIVER,
    DETOUR_PICK,
    DRIVE,
    HONK,
    NCELLS,
    NTYPES,
    NUM_ACTIONS,
    PICKUP,
    PLACE,
)
from trafficenvs.jakarta_traffic.rules.orders import (
    deliverable,
)


@kernel
def vacant_pickup(rec, cfg, x):
    """K7: a tile the rest of a stack may go to: a pick-up tile with no stack or moped."""
    return cfg.tile_kind[rec.cell_tile[x]] == PICKUP and (occupied_bits(rec, cfg) >> x) & 1 == 0


@kernel
def is_legal(rec, cfg, action):
    """Whether ``action`` is legal for the mover (the mask's entry, computed alone)."""
    if rec.over or action < 0 or action >= NUM_ACTIONS:
        return False
    ph = rec.phase
    if action < A_DRIVE:
        return ph == HONK and honk_legal(rec, cfg, action)
    if action < A_DETOUR:
        return (ph == HONK or ph == DRIVE) and rec.dest[action - A_DRIVE] >= 0
    if action == A_DETOUR:
        return ph == HONK or ph == DRIVE
    if action < A_ACCEPT:
        if ph == DETOUR_PICK:
            return True
        return ph == PLACE and vacant_pickup(rec, cfg, action - A_CELL)
    if action == A_ACCEPT:
        return ph == ACCEPT
    if action == A_DECLINE:
        return ph == ACCEPT or ph == DELIVER
    if ph != DELIVER:
        return False
    p = rec.cur
    return (deliverable(rec, cfg, p, rec.pos[p]) >> (action - A_DELIVER)) & 1 == 1


@kernel
def legal_mask(rec, cfg, out):
    """The mover's legal actions as 0/1 in ``out`` (all zeros once the game is over)."""
    out[:] = 0
    if rec.over:
        return
    ph = rec.phase
    if ph == HONK or ph == DRIVE:
        for e in range(4):
            if rec.dest[e] >= 0:
                out[A_DRIVE + e] = 1
        out[A_DETOUR] = 1
        if ph == HONK:
            honk_mask(rec, cfg, out)
    elif ph == DETOUR_PICK:
        for x in range(NCELLS):
            out[A_CELL + x] = 1
    elif ph == ACCEPT:
        out[A_ACCEPT] = 1
        out[A_DECLINE] = 1
    elif ph == PLACE:
        taken = occupied_bits(rec, cfg)
        for x in range(NCELLS):
            if (taken >> x) & 1 == 0 and cfg.tile_kind[rec.cell_tile[x]] == PICKUP:
                out[A_CELL + x] = 1
    else:  # DELIVER
        out[A_DECLINE] = 1
        p = rec.cur
        bits = deliverable(rec, cfg, p, rec.pos[p])
        for t in range(NTYPES):
            if (bits >> t) & 1:
                out[A_DELIVER + t] = 1
