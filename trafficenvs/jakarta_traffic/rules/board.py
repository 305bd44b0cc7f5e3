"""The board and its paths (K2, K3, K6's tracing): tile links, path tracing, the
derived caches, and which cells are occupied.

Derived caches kept in the record (so masks and observations cost no path tracing):
``links`` (each cell's ``conn`` at its rotation), ``code`` (each cell's observation
code), ``drive_to`` (where a drive out of each edge of each cell parks: :func:`trace`
of every cell and edge, ``NO_DRIVE`` for no path or a path back to the same cell) and
``dest`` (where each exit of the mover's tile parks, -1 if not a legal drive). They are
refreshed on every tile change (``drive_to`` only along the paths through the changed
tile, :func:`update_drive_to`) and every change of mover, and rebuilt
by :func:`refresh` when a state dict is loaded; ``invariants.check`` verifies them.
Tracing a path is table lookups in a loop that ends after at most one visit per path
end.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.rules.layout import CENTRE, NCELLS, NO_DRIVE, NTYPES


@kernel
def conn_at(rec, cfg, x, e):
    """Where path end ``e`` of cell ``x`` leads inside its tile (an edge or CENTRE)."""
    return cfg.conn[cfg.tile_pat[rec.cell_tile[x]], rec.cell_rot[x], e]


@kernel
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


@kernel(inline="always")
def path_stop(links, exit_to, x, g):
    """K6, K3: follow the path entering cell ``x`` by edge ``g`` through tiles and alleys
    to the parking spot where it ends, on any links table (``links[cell, edge]``:
    ``rec.links``, or a player's own reading of the board). Returns that spot's cell
    ``* 4 +`` the edge the path enters it by; -1 if it never ends (a closed loop of
    crossings, which no parking spot's path can be).

    Each path end is passed at most once, so the loop is bounded by their number."""
    for _ in range(4 * NCELLS + 1):
        h = links[x, g]
        if h == CENTRE:
            return x * 4 + g
        t = exit_to[x, h]
        x = t >> 2
        g = t & 3
    return -1


@kernel(inline="always")
def path_end(links, exit_to, x, g):
    """The cell of :func:`path_stop` (-1: none)."""
    s = path_stop(links, exit_to, x, g)
    return s >> 2 if s >= 0 else -1


@kernel(inline="always")
def follow(links, exit_to, x, e):
    """K6: where the path leaving cell ``x``'s parking spot through edge ``e`` parks, on
    any links table (:func:`path_end`); -1 if edge ``e`` does not lead to the spot."""
    if links[x, e] != CENTRE:
        return -1
    t = exit_to[x, e]
    return path_end(links, exit_to, t >> 2, t & 3)


@kernel
def trace(rec, cfg, x, e):
    """K6: the cell whose parking spot ends the path leaving ``x`` through edge ``e``
    (:func:`follow` on the record's links); -1 if edge ``e`` of ``x`` does not lead to
    its parking spot (no path to take)."""
    return follow(rec.links, cfg.exit_to, x, e)


@kernel(inline="always")
def _outward(links, exit_to, x, g):
    """:func:`path_stop` of the path leaving cell ``x`` through edge ``g``."""
    t = exit_to[x, g]
    return path_stop(links, exit_to, t >> 2, t & 3)


@kernel(inline="always")
def _drive_end(x, b):
    """The ``drive_to`` entry of a path from cell ``x`` to the spot of cell ``b``."""
    return b if b != x else NO_DRIVE


@kernel
def set_drive_to(rec, cfg):
    """Recompute the whole ``drive_to`` cache: ``drive_to[x, e]`` = :func:`trace` of
    ``(x, e)``, ``NO_DRIVE`` where that is -1 or ``x`` itself (each path is walked once,
    from one of its two parking spots)."""
    links = rec.links
    exit_to = cfg.exit_to
    for x in range(NCELLS):
        for e in range(4):
            rec.drive_to[x, e] = -1
    for x in range(NCELLS):
        for e in range(4):
            if links[x, e] != CENTRE:
                rec.drive_to[x, e] = NO_DRIVE
            elif rec.drive_to[x, e] < 0:
                b = _outward(links, exit_to, x, e)  # a path from a spot always ends
                y = b >> 2
                rec.drive_to[x, e] = _drive_end(x, y)
                rec.drive_to[y, b & 3] = _drive_end(y, x)


@kernel
def update_drive_to(rec, cfg, y):
    """Bring the ``drive_to`` cache up to date after cell ``y``'s tile changed (its links
    already are): only the paths through ``y`` changed, and each of them passes one of
    ``y``'s four edge ends, so walking out of each edge end to both of its path's parking
    spots finds every entry to rewrite (four short walks: one per edge end)."""
    links = rec.links
    exit_to = cfg.exit_to
    for g in range(4):
        if links[y, g] != CENTRE:
            rec.drive_to[y, g] = NO_DRIVE
    for g in range(4):
        h = links[y, g]
        if h != CENTRE and h < g:
            continue  # a crossing inside y: done from its other edge
        a = _outward(links, exit_to, y, g)
        if a < 0:
            continue  # a closed loop of crossings: no parking spot on it
        b = y * 4 + g if h == CENTRE else _outward(links, exit_to, y, h)
        rec.drive_to[a >> 2, a & 3] = _drive_end(a >> 2, b >> 2)
        rec.drive_to[b >> 2, b & 3] = _drive_end(b >> 2, a >> 2)


@kernel
def refresh(rec, cfg):
    """Recompute the derived caches: every cell's links, the drive ends and the mover's
    drive targets.

    ``dest[e]`` is where driving out of edge ``e`` parks, -1 if that is no legal drive
    (no path, or the path returns to the turn's start, K6). Valid while the mover is
    to honk or drive; refreshed whenever the board or the mover changes.
    """
    for x in range(NCELLS):
        set_links(rec, cfg, x)
    set_drive_to(rec, cfg)
    refresh_dest(rec, cfg)


@kernel
def drive_target(rec, cfg, e):
    """K6: where the mover's drive out of edge ``e`` parks, -1 if that is no legal drive."""
    d = trace(rec, cfg, rec.pos[rec.cur], e)
    return d if d >= 0 and d != rec.start else -1


@kernel
def refresh_dest(rec, cfg):
    """Recompute ``dest`` (the mover's drive targets, :func:`drive_target`, read from the
    ``drive_to`` cache)."""
    x0 = rec.pos[rec.cur]
    for e in range(4):
        d = rec.drive_to[x0, e]
        rec.dest[e] = d if d != NO_DRIVE and d != rec.start else -1


@kernel
def stack_at(rec, x):
    """The order type whose stack lies on cell ``x``, or -1."""
    for t in range(NTYPES):
        if rec.stack_cell[t] == x and rec.stack_n[t] > 0:
            return t
    return -1


@kernel
def occupied_bits(rec, cfg):
    """Cells holding an order stack or a moped, as bits of an int64 (K7 "vacant")."""
    b = np.int64(0)
    for t in range(NTYPES):
        if rec.stack_n[t] > 0 and rec.stack_cell[t] >= 0:
            b |= np.int64(1) << rec.stack_cell[t]
    for q in range(cfg.num_players):
        b |= np.int64(1) << rec.pos[q]
    return b


@kernel
def blocked_bits(rec, cfg):
    """Cells holding an order stack, a moped or the marker: not to be honked (K5)."""
    b = occupied_bits(rec, cfg)
    if rec.marker >= 0:
        b |= np.int64(1) << rec.marker
    return b
