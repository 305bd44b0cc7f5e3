"""The board and its paths (K2, K3, K6's tracing): tile links, path tracing, the
derived caches, and which cells are occupied.

Derived caches kept in the record (so masks and observations cost no path tracing):
``links`` (each cell's ``conn`` at its rotation), ``code`` (each cell's observation
code) and ``dest`` (where each exit of the mover's tile parks, -1 if not a legal
drive). They are refreshed on every tile change and every change of mover, and
rebuilt by :func:`refresh` when a state dict is loaded; ``invariants.check`` verifies
them. Driving is table lookups in a loop that ends after at most one visit per path
end.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trafficenvs.jakarta_traffic.layout import CENTRE, NCELLS, NTYPES


@njit(cache=True)
def conn_at(rec, cfg, x, e):
    """Where path end ``e`` of cell ``x`` leads inside its tile (an edge or CENTRE)."""
    return cfg.conn[cfg.tile_pat[rec.cell_tile[x]], rec.cell_rot[x], e]


@njit(cache=True)
def set_links(rec, cfg, x):
    """Cache cell ``x``'s links at its rotation in ``rec.links`` (after any tile change)."""
    pat = cfg.tile_pat[rec.cell_tile[x]]
    rot = rec.cell_rot[x]
    code = cfg.tile_kind[rec.cell_tile[x]] << 4
    for e in range(4):
        g = cfg.conn[pat, rot, e]
        rec.links[x, e] = g
        if g == CENTRE:
            code |= 1 << e
    rec.code[x] = code


@njit(cache=True)
def trace(rec, cfg, x, e):
    """K6: the cell whose parking spot ends the path leaving ``x`` through edge ``e``.

    -1 if edge ``e`` of ``x`` does not lead to its parking spot (no path to take). Each
    path end is passed at most once, so the loop is bounded by their number.
    """
    if rec.links[x, e] != CENTRE:
        return -1
    for _ in range(4 * NCELLS + 1):
        t = cfg.exit_to[x, e]
        x = t >> 2
        g = rec.links[x, t & 3]
        if g == CENTRE:
            return x
        e = g
    return -1


@njit(cache=True)
def refresh(rec, cfg):
    """Recompute the derived caches: every cell's links and the mover's drive targets.

    ``dest[e]`` is where driving out of edge ``e`` parks, -1 if that is no legal drive
    (no path, or the path returns to the turn's start, K6). Valid while the mover is
    to honk or drive; refreshed whenever the board or the mover changes.
    """
    for x in range(NCELLS):
        set_links(rec, cfg, x)
    refresh_dest(rec, cfg)


@njit(cache=True)
def drive_target(rec, cfg, e):
    """K6: where the mover's drive out of edge ``e`` parks, -1 if that is no legal drive."""
    d = trace(rec, cfg, rec.pos[rec.cur], e)
    return d if d >= 0 and d != rec.start else -1


@njit(cache=True)
def refresh_dest(rec, cfg):
    """Recompute ``dest`` (the mover's drive targets, :func:`drive_target`)."""
    x0 = rec.pos[rec.cur]
    for e in range(4):
        d = trace(rec, cfg, x0, e)
        rec.dest[e] = d if d >= 0 and d != rec.start else -1


@njit(cache=True)
def stack_at(rec, x):
    """The order type whose stack lies on cell ``x``, or -1."""
    for t in range(NTYPES):
        if rec.stack_cell[t] == x and rec.stack_n[t] > 0:
            return t
    return -1


@njit(cache=True)
def occupied_bits(rec, cfg):
    """Cells holding an order stack or a moped, as bits of an int64 (K7 "vacant")."""
    b = np.int64(0)
    for t in range(NTYPES):
        if rec.stack_n[t] > 0 and rec.stack_cell[t] >= 0:
            b |= np.int64(1) << rec.stack_cell[t]
    for q in range(cfg.num_players):
        b |= np.int64(1) << rec.pos[q]
    return b


@njit(cache=True)
def blocked_bits(rec, cfg):
    """Cells holding an order stack, a moped or the marker: not to be honked (K5)."""
    b = occupied_bits(rec, cfg)
    if rec.marker >= 0:
        b |= np.int64(1) << rec.marker
    return b
