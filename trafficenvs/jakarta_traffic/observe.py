"""The observation (C4: everything is open; seats are ordered from the observer's),
written by the layout of ``layout.obs_layout``: block part offsets are module
constants, the offsets of the fields after the seats' block come from ``cfg.ob_*``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trafficenvs.jakarta_traffic.layout import (
    CELL_F,
    CELL_MARKER,
    CELL_ME,
    CELL_OTHERS,
    CELL_STACK,
    CELL_TILE_F,
    CENTRE,
    CHARGING,
    NCELLS,
    NO_SPARE,
    NPHASES,
    NSLOTS,
    NTYPES,
    OB_CELLS,
    OB_PLAYERS,
    OBS_ROUND_CAP,
    PL_BUBBLES,
    PL_COL,
    PL_ENERGY,
    PL_HOLDS,
    PL_PASSENGERS,
    PL_POINTS,
    PL_ROW,
    PL_SPARE_CHARGING,
    PL_SPARE_ENDS,
    PL_STARS,
    PLAYER_F,
    SIDE,
    STAR_VALUES,
    TY_ADDR_COL,
    TY_ADDR_ROW,
    TY_PAYS,
    TY_STACK_COL,
    TY_STACK_N,
    TY_STACK_ROW,
    TYPE_F,
)
from trafficenvs.jakarta_traffic.orders import slot_pays


@njit(cache=True)
def observe_cells(rec, cfg, seat, out):
    """The ``cells`` block: each cell's tile features (a table by its code), stacks, the
    marker and the mopeds."""
    o0 = OB_CELLS
    for x in range(NCELLS):
        o = o0 + x * CELL_F
        code = rec.code[x]  # the cell's tile features, precomputed per code
        for k in range(CELL_TILE_F):
            out[o + k] = cfg.feat[code, k]
        for k in range(CELL_TILE_F, CELL_F):
            out[o + k] = 0.0
    for t in range(NTYPES):
        if rec.stack_n[t] > 0:
            out[o0 + np.int64(rec.stack_cell[t]) * CELL_F + CELL_STACK] = rec.stack_n[t]
    if rec.marker >= 0:
        out[o0 + np.int64(rec.marker) * CELL_F + CELL_MARKER] = 1.0
    for q in range(cfg.num_players):
        if q == seat:
            out[o0 + np.int64(rec.pos[q]) * CELL_F + CELL_ME] = 1.0
        else:
            out[o0 + np.int64(rec.pos[q]) * CELL_F + CELL_OTHERS] += 1.0


@njit(cache=True)
def observe_players(rec, cfg, seat, out):
    """The ``players`` block: one entry per seat, the observer's first (C4)."""
    n = cfg.num_players
    o = OB_PLAYERS
    for j in range(n):
        s = seat + j
        if s >= n:
            s -= n
        x = rec.pos[s]
        r = x // SIDE
        out[o + PL_ROW] = r
        out[o + PL_COL] = x - r * SIDE
        out[o + PL_ENERGY] = rec.energy[s]
        out[o + PL_BUBBLES] = rec.bubbles[s]
        out[o + PL_STARS] = rec.nstars[s]
        out[o + PL_POINTS] = rec.points[s]
        out[o + PL_PASSENGERS] = rec.passengers[s]
        for t in range(NTYPES):
            out[o + PL_HOLDS + t] = rec.held[s, t]
        sp = rec.spare[s]
        if sp == NO_SPARE:
            for k in range(4):
                out[o + PL_SPARE_ENDS + k] = 0.0
            out[o + PL_SPARE_CHARGING] = 0.0
        else:
            for e in range(4):
                out[o + PL_SPARE_ENDS + e] = (
                    1.0 if cfg.conn[cfg.tile_pat[sp], 0, e] == CENTRE else 0.0)
            out[o + PL_SPARE_CHARGING] = 1.0 if cfg.tile_kind[sp] == CHARGING else 0.0
        o += PLAYER_F


@njit(cache=True)
def observe_types(rec, cfg, out):
    """The ``types`` block: per order type what it pays, its address and its stack."""
    for i in range(NSLOTS):
        t = np.int64(rec.ord_slot[i])
        b = cfg.ob_types + t * TYPE_F
        j = slot_pays(rec, i)
        out[b + TY_PAYS] = 0.0 if j < 0 else STAR_VALUES[j]
        k = i + 1 if i + 1 < NSLOTS else NSLOTS - 1
        x = rec.addr_cell[rec.addr_slot[k]]
        r = x // SIDE
        out[b + TY_ADDR_ROW] = r
        out[b + TY_ADDR_COL] = x - r * SIDE
        sn = rec.stack_n[t]
        out[b + TY_STACK_N] = sn
        if sn > 0:
            x = rec.stack_cell[t]
            r = x // SIDE
            out[b + TY_STACK_ROW] = r
            out[b + TY_STACK_COL] = x - r * SIDE
        else:
            out[b + TY_STACK_ROW] = 0.0
            out[b + TY_STACK_COL] = 0.0


@njit(cache=True)
def observe(rec, cfg, seat, out):
    """Seat ``seat``'s view (everything is open information; C4 seat order)."""
    observe_cells(rec, cfg, seat, out)
    observe_players(rec, cfg, seat, out)
    observe_types(rec, cfg, out)
    o = cfg.ob_phase
    for k in range(NPHASES):
        out[o + k] = 0.0
    out[o + np.int64(rec.phase)] = 1.0
    out[cfg.ob_end_triggered] = rec.trigger
    out[cfg.ob_round] = rec.round if rec.round < OBS_ROUND_CAP else OBS_ROUND_CAP
    out[cfg.ob_marker_off] = 1.0 if rec.marker < 0 else 0.0
    for i in range(NSLOTS):
        out[cfg.ob_star_piles + i] = rec.star_left[i]
    out[cfg.ob_dice] = rec.dice[0]
    out[cfg.ob_dice + 1] = rec.dice[1]
