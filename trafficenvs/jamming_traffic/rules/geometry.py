"""Where a car may go: the one-way sign, the roundabout, a pushed car's exit (J4, J7).

A *half-edge* ``h = 2 * r + x`` is road ``r`` seen from its end ``x``; the exits below
are half-edges (the road a car joins, and the end it joins at), ``-1`` for none. The
straight-on order of a pushed car is precomputed per map (``cfg.st``, ``cfg.st_end``,
``cfg.st_h``: J1, J7); the pieces (one roundabout, one one-way sign, J4) are read from
the record.
"""

from __future__ import annotations

from trafficenvs.core.jit import kernel


@kernel
def can_enter(rec, r, x):
    """A car may enter road ``r`` at its end ``x`` (the one-way sign, J7)."""
    return r != rec.ow_road or x == rec.ow_entry


@kernel
def can_leave(rec, r, x):
    """A car may leave road ``r`` through its end ``x`` (the one-way sign, J7)."""
    return r != rec.ow_road or x != rec.ow_entry


@kernel
def rb_exit(rec, cfg, r, x):
    """The roundabout's exit for a car arriving from road ``r`` end ``x``: half-edge or -1.

    The next road round in the roundabout's direction, or the one after it when the
    next is the one-way road entered at its exit end (J7). Only one road end at a town
    can be closed that way (roads join distinct towns, one sign), so two tries are
    enough; at a town of degree 1 or 2 the second try is the car's own road (the
    U-turn). Steered and pushed cars alike take it. Public: the greedy player uses it
    to cost a car's forced first step at the roundabout.
    """
    t = cfg.rt[r, x]
    d = cfg.deg[t]
    p = cfg.pos[r, x]
    if rec.rb_dir == 0:
        p1 = p + 1 if p + 1 < d else p + 1 - d
        p2 = p1 + 1 if p1 + 1 < d else p1 + 1 - d
    else:
        p1 = p - 1 if p >= 1 else p - 1 + d
        p2 = p1 - 1 if p1 >= 1 else p1 - 1 + d
    c = cfg.inc[t, p1]
    ce = cfg.inc_end[t, p1]
    if can_enter(rec, c, ce):
        return 2 * c + ce
    c = cfg.inc[t, p2]
    ce = cfg.inc_end[t, p2]
    if can_enter(rec, c, ce):
        return 2 * c + ce
    return -1


@kernel
def pushed_exit(rec, cfg, r, x):
    """Where a car pushed off road ``r`` through end ``x`` goes (J7): half-edge or -1.

    Straight on (the precomputed order, its own road last) unless a piece is in the
    way: the roundabout's exit at its town, and the one-way sign's ends skipped.
    """
    t = cfg.rt[r, x]
    first = cfg.st_h[r, x]
    ow = rec.ow_road
    if t != rec.rb_town and r != ow and (first >> 1) != ow:
        return first  # no piece in the way: the precomputed straight-on exit
    if not can_leave(rec, r, x):
        return -1
    if t == rec.rb_town:
        return rb_exit(rec, cfg, r, x)
    for k in range(cfg.deg[t]):
        c = cfg.st[r, x, k]
        ce = cfg.st_end[r, x, k]
        if can_enter(rec, c, ce):
            return 2 * c + ce
    return -1
