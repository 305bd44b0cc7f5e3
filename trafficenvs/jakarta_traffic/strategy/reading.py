"""The greedy Jakarta Traffic player's reading of one observation row (C4, v1: uint8
entries, rows, columns and categories one-hot).

Every observation offset comes from the game's layouts (``layout.py``) by name: part
offsets as module constants, the offsets that depend on the player count from the
config record (``cfg.ob_*``), passed in by the caller. Counts are read as the v0 player
read them (points, pays and energies as floats), so its choices stay the same.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.rules.layout import (
    BUBBLE_BONUS,
    BUILDING,
    CELL_ENDS,
    CELL_F,
    CELL_KIND,
    CELL_MARKER,
    CELL_ME,
    CELL_OTHERS,
    CELL_STACK,
    CHARGING,
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
    TYPE_F,
)
from trafficenvs.jakarta_traffic.strategy.maze import set_links


@kernel
def bits4(ob, o):
    """Four 0/1 entries ``ob[o:o + 4]`` (path ends N, E, S, W) as bits."""
    v = 0
    for e in range(4):
        if ob[o + e]:
            v |= 1 << e
    return v


@kernel
def _index(ob, o, n):
    """The position of the 1 in the one-hot ``ob[o:o + n]`` (0 if none)."""
    k = 0
    for i in range(n):
        if ob[o + i]:
            k = i
    return k


@kernel
def cell_of(ob, row, col):
    """The cell whose row and column one-hots start at ``ob[row]`` and ``ob[col]``."""
    return _index(ob, row, SIDE) * SIDE + _index(ob, col, SIDE)


@kernel
def read_phase(ob, ob_phase):
    """The phase of the decision (its one-hot part)."""
    return _index(ob, ob_phase, NPHASES)


@kernel
def read_cells(ob, ob_cells, bits, kind, building, links, others, stack_type):
    """The board, into the caller's per-cell arrays: its spot bits and links, its kind
    (0 pick-up, 1 charging, 2 building), whether it is a building and how many
    competitors stand on it, and the type of the stack on it (-1: none). Returns the
    cells that may not be honked (a stack, the marker or a moped on them), as bits."""
    blocked = np.int64(0)
    for x in range(NCELLS):
        o = ob_cells + x * CELL_F
        v = bits4(ob, o + CELL_ENDS)
        bits[x] = v
        set_links(links, x, v)
        kind[x] = 0
        building[x] = 0
        if ob[o + CELL_KIND + CHARGING]:
            kind[x] = 1
        elif ob[o + CELL_KIND + BUILDING]:
            kind[x] = 2
            building[x] = 1
        stack_type[x] = -1
        for t in range(NTYPES):
            if ob[o + CELL_STACK + t]:
                stack_type[x] = t
        if stack_type[x] >= 0 or ob[o + CELL_MARKER] or ob[o + CELL_ME] or ob[o + CELL_OTHERS]:
            blocked |= np.int64(1) << x
        others[x] = np.int64(ob[o + CELL_OTHERS])
    return blocked


@kernel
def read_me(ob, P):
    """The observer (the first player block at ``ob[P:]``, C4): cell, energy, bubbles,
    stars, points, passengers delivered, orders held (bits by type), spare's spot bits."""
    me = cell_of(ob, P + PL_ROW, P + PL_COL)
    energy = np.int64(ob[P + PL_ENERGY])
    bubbles = np.int64(ob[P + PL_BUBBLES])
    nstars = np.int64(ob[P + PL_STARS])
    points = np.float64(ob[P + PL_POINTS])
    passengers = np.int64(ob[P + PL_PASSENGERS])
    held = 0
    for t in range(NTYPES):
        if ob[P + PL_HOLDS + t]:
            held |= 1 << t
    spare = bits4(ob, P + PL_SPARE_ENDS)
    return me, energy, bubbles, nstars, points, passengers, held, spare


@kernel
def read_opponents(ob, P, n, opp_pos, opp_energy):
    """The competitors (player blocks 1 to ``n - 1``), into the caller's arrays: their
    cells (``opp_pos[1:n]``), per cell how many of them there could take a chat's
    energy; returns the best final score among them."""
    opp_pos[0] = 0
    for x in range(NCELLS):
        opp_energy[x] = 0.0
    opp_best = -1.0
    for j in range(1, n):
        o = P + PLAYER_F * j
        q = cell_of(ob, o + PL_ROW, o + PL_COL)
        opp_pos[j] = q
        en = np.float64(ob[o + PL_ENERGY])
        if en < MAX_ENERGY - 0.5:
            opp_energy[q] += 1.0
        final = np.float64(ob[o + PL_POINTS]) + en + BUBBLE_BONUS[np.int64(ob[o + PL_BUBBLES])]
        if final > opp_best:
            opp_best = final
    return opp_best


@kernel
def read_orders(ob, ob_types, stack_type, addr, pay, stack):
    """The orders, into the caller's arrays: each type's current address and what a
    delivery pays, and where its stack lies (-1: none; from the cells' stacks,
    ``stack_type`` of :func:`read_cells`)."""
    for t in range(NTYPES):
        stack[t] = -1
    for t in range(NTYPES):
        o = ob_types + TYPE_F * t
        pay[t] = np.float64(ob[o + TY_PAYS])
        addr[t] = cell_of(ob, o + TY_ADDR_ROW, o + TY_ADDR_COL)
    for x in range(NCELLS):
        if stack_type[x] >= 0:
            stack[stack_type[x]] = x
