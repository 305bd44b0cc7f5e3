"""The greedy Jakarta Traffic player's reading of one observation row (C4).

Every observation offset comes from the game's layouts (``layout.py``): part offsets
as module constants, the offsets that depend on the player count from the config
record (``cfg.ob_*``), passed in by the caller.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trafficenvs.jakarta_traffic.greedy_maze import _set_links
from trafficenvs.jakarta_traffic.layout import (
    BUBBLE_BONUS,
    CELL_BUILDING,
    CELL_CHARGING,
    CELL_ENDS,
    CELL_F,
    CELL_MARKER,
    CELL_ME,
    CELL_OTHERS,
    CELL_STACK,
    MAX_ENERGY,
    NCELLS,
    NPHASES,
    NTYPES,
    PL_BUBBLES,
    PL_COL,
    PL_ENERGY,
    PL_HOLDS,
    PL_PASSENGERS,
    PL_POINTS,
    PL_ROW,
    PL_SPARE_ENDS,
    PL_STARS,
    PLAYER_F,
    SIDE,
    TY_ADDR_COL,
    TY_ADDR_ROW,
    TY_PAYS,
    TY_STACK_COL,
    TY_STACK_N,
    TY_STACK_ROW,
    TYPE_F,
)


@njit(cache=True)
def _bits4(ob, o):
    """Four 0/1 entries ``ob[o:o + 4]`` (path ends N, E, S, W) as bits."""
    v = 0
    for e in range(4):
        if ob[o + e] > 0.5:
            v |= 1 << e
    return v


@njit(cache=True)
def _cell_of(ob, row, col):
    """The cell whose row and column are ``ob[row]``, ``ob[col]``."""
    return int(ob[row] + 0.5) * SIDE + int(ob[col] + 0.5)


@njit(cache=True)
def _read_phase(ob, ob_phase):
    """The phase of the decision (the last one set in the one-hot part)."""
    phase = 0
    for k in range(NPHASES):
        if ob[ob_phase + k] > 0.5:
            phase = k
    return phase


@njit(cache=True)
def _read_cells(ob, ob_cells):
    """The board: per cell its spot bits and links, its kind (0 pick-up, 1 charging,
    2 building), whether it is a building and how many competitors stand on it; and the
    cells that may not be honked (a stack, the marker or a moped on them), as bits."""
    bits = np.zeros(NCELLS, np.int64)
    kind = np.zeros(NCELLS, np.int64)
    building = np.zeros(NCELLS, np.bool_)
    links = np.zeros((NCELLS, 4), np.int64)
    others = np.zeros(NCELLS, np.int64)
    blocked = np.int64(0)
    for x in range(NCELLS):
        o = ob_cells + x * CELL_F
        v = _bits4(ob, o + CELL_ENDS)
        bits[x] = v
        _set_links(links, x, v)
        if ob[o + CELL_CHARGING] > 0.5:
            kind[x] = 1
        elif ob[o + CELL_BUILDING] > 0.5:
            kind[x] = 2
            building[x] = True
        if ob[o + CELL_STACK] > 0.5 or ob[o + CELL_MARKER] > 0.5 or ob[o + CELL_ME] > 0.5 \
                or ob[o + CELL_OTHERS] > 0.5:
            blocked |= np.int64(1) << x
        others[x] = np.int64(ob[o + CELL_OTHERS] + 0.5)
    return bits, kind, building, links, others, blocked


@njit(cache=True)
def _read_me(ob, P):
    """The observer (the first player block at ``ob[P:]``, C4): cell, energy, bubbles,
    stars, points, passengers delivered, orders held (bits by type), spare's spot bits."""
    me = _cell_of(ob, P + PL_ROW, P + PL_COL)
    energy = int(ob[P + PL_ENERGY] + 0.5)
    bubbles = int(ob[P + PL_BUBBLES] + 0.5)
    nstars = int(ob[P + PL_STARS] + 0.5)
    points = ob[P + PL_POINTS]
    passengers = int(ob[P + PL_PASSENGERS] + 0.5)
    held = 0
    for t in range(NTYPES):
        if ob[P + PL_HOLDS + t] > 0.5:
            held |= 1 << t
    spare = _bits4(ob, P + PL_SPARE_ENDS)
    return me, energy, bubbles, nstars, points, passengers, held, spare


@njit(cache=True)
def _read_opponents(ob, P, n):
    """The competitors (player blocks 1 to ``n - 1``): their cells, per cell how many
    of them there could take a chat's energy, and the best final score among them."""
    opp_pos = np.zeros(n, np.int64)
    opp_energy = np.zeros(NCELLS, np.float64)
    opp_best = -1.0
    for j in range(1, n):
        o = P + PLAYER_F * j
        q = _cell_of(ob, o + PL_ROW, o + PL_COL)
        opp_pos[j] = q
        en = ob[o + PL_ENERGY]
        if en < MAX_ENERGY - 0.5:
            opp_energy[q] += 1.0
        final = ob[o + PL_POINTS] + en + BUBBLE_BONUS[int(ob[o + PL_BUBBLES] + 0.5)]
        if final > opp_best:
            opp_best = final
    return opp_pos, opp_energy, opp_best


@njit(cache=True)
def _read_orders(ob, ob_types):
    """The orders: each type's current address and what a delivery pays, where its stack
    lies (-1: none), and per cell the type of the stack on it (-1: none)."""
    addr = np.zeros(NTYPES, np.int64)
    pay = np.zeros(NTYPES, np.float64)
    stack = np.full(NTYPES, -1, np.int64)
    stack_type = np.full(NCELLS, -1, np.int64)
    for t in range(NTYPES):
        o = ob_types + TYPE_F * t
        pay[t] = ob[o + TY_PAYS]
        addr[t] = _cell_of(ob, o + TY_ADDR_ROW, o + TY_ADDR_COL)
        if ob[o + TY_STACK_N] > 0.5:
            c = _cell_of(ob, o + TY_STACK_ROW, o + TY_STACK_COL)
            stack[t] = c
            stack_type[c] = t
    return addr, pay, stack, stack_type
