"""The greedy Jakarta Traffic player's maze: paths, honks and distances in turns.

The player rebuilds each cell's links from its four "path end leads to the spot" bits
(:func:`set_links`), follows paths through the fixed frame (``exit_to``, the game's
:func:`~trafficenvs.jakarta_traffic.rules.tiles.exit_table`) with the rules' own path tracing
on its links table (:func:`~trafficenvs.jakarta_traffic.rules.board.follow`,
:func:`~trafficenvs.jakarta_traffic.rules.board.path_end`) and lists the distinct honks
of a tile. From these it computes where one turn can take a moped from each cell (a
honk on one of its paths allowed) and, by a breadth-first search over those one-turn
sets, the number of turns between any two cells (strategy: ``greedy.py``).
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jakarta_traffic.rules.board import path_end
from trafficenvs.jakarta_traffic.rules.layout import A_ROTATE, A_SWAP, CENTRE, NCELLS

HORIZON = 5  # turns searched for distances
FAR = 7  # distance counted for a cell not reached within the horizon


@kernel
def rotl(bits, k):
    """The spot bits of a tile turned ``k`` quarter turns clockwise (edge e -> e + k)."""
    k &= 3
    return ((bits << k) | (bits >> (4 - k))) & 15


@kernel
def set_links(links, y, bits):
    """Cell ``y``'s links from its spot bits: ends not to the spot join each other."""
    other = -1
    for e in range(4):
        if (bits >> e) & 1:
            links[y, e] = CENTRE
        elif other < 0:
            other = e
        else:
            links[y, e] = other
            links[y, other] = e


@kernel
def trace_cells(links, exit_to, x, e):
    """The cells a path out of ``x`` by edge ``e`` passes or ends on, as bits."""
    seen = np.int64(0)
    if links[x, e] != CENTRE:
        return seen
    for _ in range(4 * NCELLS + 1):
        t = exit_to[x, e]
        x = t >> 2
        seen |= np.int64(1) << x
        g = links[x, t & 3]
        if g == CENTRE:
            return seen
        e = g
    return seen


@kernel
def _honk_bits(bits, o, spare, can_swap):
    """Option ``o`` of honking a tile with spot bits ``bits``: rotations 1-3 (o = 0-2),
    the spare swapped in at rotation 0-3 (o = 3-6). -1 if the option does not exist."""
    if o < 3:
        return rotl(bits, o + 1)
    if not can_swap:
        return -1
    return rotl(spare, o - 3)


@kernel
def honk_options(bits, spare, can_swap):
    """The distinct honks of a tile with spot bits ``bits``, in option order (rotations
    1-3, then the spare at rotations 0-3; :func:`_honk_bits`), skipping any that leaves
    the tile as it is or as an earlier option did. Returns ``(packed, count)``: option
    ``i`` is ``(packed >> 7 * i) & 127`` = ``o << 4 | new bits`` (no allocation)."""
    seen = 1 << bits
    packed = np.int64(0)
    count = 0
    for o in range(7):
        nb = _honk_bits(bits, o, spare, can_swap)
        if nb < 0 or (seen >> nb) & 1:
            continue
        seen |= 1 << nb
        packed |= np.int64(o << 4 | nb) << (7 * count)
        count += 1
    return packed, count


@kernel
def honk_action(y, o):
    """The action of honk option ``o`` (:func:`_honk_bits`) on cell ``y``."""
    return A_ROTATE + 3 * y + o if o < 3 else A_SWAP + 4 * y + (o - 3)


@kernel
def reach_one(links, bits, exit_to, blocked, building, spare, has_spare, first, x):
    """The cells one turn can take a moped on ``x`` to (a honk on one of its paths'
    tiles allowed, with the spare ``spare``), as bits. ``links`` is left as it was.

    A honk on tile ``y`` changes a path only from where it first enters ``y``, so each
    path is walked once, noting that entry edge (``first[e, y]``, -1 if it never enters
    ``y``), and every honk of ``y`` re-traces only the affected paths, from ``y`` on."""
    r = np.int64(0)
    path = np.int64(0)
    for e in range(4):
        for y in range(NCELLS):
            first[e, y] = -1
        if links[x, e] != CENTRE:
            continue
        c = x
        g = e
        for _ in range(4 * NCELLS + 1):
            t = exit_to[c, g]
            c = t >> 2
            if first[e, c] < 0:
                first[e, c] = t & 3
                path |= np.int64(1) << c
            g = links[c, t & 3]
            if g == CENTRE:
                break
        if c != x:
            r |= np.int64(1) << c
    cand = path & ~blocked & ~(np.int64(1) << x)
    for y in range(NCELLS):
        if (cand >> y) & 1 == 0:
            continue
        b0 = bits[y]
        opts, count = honk_options(b0, spare, has_spare and not building[y])
        for i in range(count):
            nb = (opts >> (7 * i)) & 15
            set_links(links, y, nb)
            for e in range(4):
                g = first[e, y]
                if g >= 0:
                    d = path_end(links, exit_to, y, g)
                    if d >= 0 and d != x:
                        r |= np.int64(1) << d
        set_links(links, y, b0)
    return r


@kernel
def reach_all(links, bits, exit_to, blocked, building, spare, has_spare, reach, first):
    """``reach[x]`` = :func:`reach_one` of every cell ``x``."""
    for x in range(NCELLS):
        reach[x] = reach_one(links, bits, exit_to, blocked, building, spare, has_spare,
                              first, x)


@kernel
def all_distances(reach, dist):
    """Turns from every cell to every other (breadth-first over one-turn sets)."""
    for s in range(NCELLS):
        for y in range(NCELLS):
            dist[s, y] = FAR
        dist[s, s] = 0
        seen = np.int64(1) << s
        front = seen
        for level in range(1, HORIZON + 1):
            nxt = np.int64(0)
            for x in range(NCELLS):
                if (front >> x) & 1:
                    nxt |= reach[x]
            nxt &= ~seen
            if nxt == 0:
                break
            for y in range(NCELLS):
                if (nxt >> y) & 1:
                    dist[s, y] = level
            seen |= nxt
            front = nxt


@kernel
def turn_distances(links, bits, exit_to, blocked, building, spare, has_spare, reach, first,
                    dist):
    """Turns from every cell to every other into ``dist`` (:func:`reach_all`,
    :func:`all_distances`; ``reach``, ``first``: their scratch, ``first`` reused later)."""
    reach_all(links, bits, exit_to, blocked, building, spare, has_spare, reach, first)
    all_distances(reach, dist)


@kernel
def nearest_chargers(kind, dist, charger_dist, charger_at):
    """For every cell, the nearest other charging station in turns into ``charger_at``
    (the first of the nearest in cell order; cell 0 if there is none)."""
    for x in range(NCELLS):
        charger_dist[x] = FAR + 1
        charger_at[x] = 0
    for x in range(NCELLS):
        for c in range(NCELLS):
            if kind[c] == 1 and c != x and dist[x, c] < charger_dist[x]:
                charger_dist[x] = dist[x, c]
                charger_at[x] = c
