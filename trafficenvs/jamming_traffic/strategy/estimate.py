"""The greedy player's race estimate: how far each seat is from winning.

A seat's standing is ``-(VISIT * towns it still has to visit + moves its car needs
to pass its next new town)``; the value of a position is my standing (seat 0) less
``ALPHA`` times the leading opponent's (the strategy is on ``greedy.py`` and the
rules page). The moves come from a Dijkstra field over the map (:func:`dijkstra`)
and the cars around the car's own road (:func:`car_cost`). The three weights are
read from the scratch record (``sc.w``: visit, opponent's car, opponent's weight),
the defaults being ``VISIT``, ``OPP_BLOCK`` and ``ALPHA``.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jamming_traffic.rules.geometry import rb_exit
from trafficenvs.jamming_traffic.rules.queues import needed_towns

BIG = 1e6
WIN = 1e9
#: weight of one town still to visit, in moves (a visit now beats any nearer route)
VISIT = 12.0
#: an opponent's car between my car and its exit: I cannot take it, only push it
OPP_BLOCK = 2.0
#: weight of the leading opponent's position against my own
ALPHA = 0.4
#: moves to pass an unvisited dead-end town from the road into it (empty it, enter,
#: fill it behind the car so that a jam pushes the car through and back)
DEAD_END = 4.0


@kernel
def locate(rec, cfg, N, cr, ci):
    """Road and queue index of every seat's car (-1: not on the board yet)."""
    for s in range(N):
        cr[s] = -1
        ci[s] = -1
    for r in range(cfg.n_roads):
        for i in range(rec.cnt[r]):
            c = rec.q[r, i]
            if c > 0:
                cr[c - 1] = r
                ci[c - 1] = i


@kernel
def unvisited(rec, cfg, s):
    """The towns seat ``s`` still has to visit (a bit per town)."""
    return needed_towns(rec, cfg, s) & ~rec.visited[s]


@kernel
def dijkstra(rec, cfg, unv, E, done):
    """E[t]: moves from "at a road end facing town t, nothing ahead" to passing a town
    of ``unv``: 1 for such a town, else 1 + the cars on a road out of t + E[its other
    end], the shortest way (one-way sign respected; cars ahead cost a move each)."""
    T = cfg.n_towns
    for t in range(T):
        done[t] = 0
        if (unv >> np.uint32(t)) & np.uint32(1):
            # a dead end is passed only by a push (a steered car may not turn back):
            # the road into it must be emptied, entered, and filled behind the car
            E[t] = DEAD_END if cfg.deg[t] == 1 else 1.0
        else:
            E[t] = BIG
    for _ in range(T):
        b = -1
        bv = BIG
        for t in range(T):
            if done[t] == 0 and E[t] < bv:
                bv = E[t]
                b = t
        if b < 0:
            break
        done[b] = 1
        for k in range(cfg.deg[b]):
            o = cfg.inc[b, k]
            oe = cfg.inc_end[b, k]
            v = cfg.rt[o, 1 - oe]
            if done[v]:
                continue
            if o == rec.ow_road and rec.ow_entry != 1 - oe:
                continue
            c = 1.0 + rec.cnt[o] + bv
            if c < E[v]:
                E[v] = c


@kernel
def car_cost(rec, cfg, unv, cr, ci, E, opp_block):
    """Moves the car at queue index ``ci`` of road ``cr`` needs to pass a town of ``unv``."""
    n = rec.cnt[cr]
    best = BIG
    for x in range(2):
        if cr == rec.ow_road and rec.ow_entry == x:
            continue
        blk = 0.0
        if x == 0:
            for i in range(ci):
                blk += 1.0 if rec.q[cr, i] == 0 else opp_block
        else:
            for i in range(ci + 1, n):
                blk += 1.0 if rec.q[cr, i] == 0 else opp_block
        u = cfg.rt[cr, x]
        if (unv >> np.uint32(u)) & np.uint32(1):
            if cfg.deg[u] == 1:
                # a dead end: only a push takes the car through (J7's U-turn), and
                # the cars between it and the dead end can never leave that way
                if blk > 0:
                    continue
                c = 1.0 + max(0, 3 - n)  # fill the road behind it, then one more
            else:
                c = blk + 1.0
        elif u == rec.rb_town:
            ex = rb_exit(rec, cfg, cr, x)  # the game's own forced exit
            if ex < 0:
                continue
            o = ex >> 1
            oe = ex & 1
            c = blk + 1.0 + rec.cnt[o] + E[cfg.rt[o, 1 - oe]]
        else:
            c = BIG
            for k in range(cfg.deg[u]):
                o = cfg.inc[u, k]
                oe = cfg.inc_end[u, k]
                if o == cr or (o == rec.ow_road and oe != rec.ow_entry):
                    continue
                cc = blk + 1.0 + rec.cnt[o] + E[cfg.rt[o, 1 - oe]]
                if cc < c:
                    c = cc
        if c < best:
            best = c
    return min(best, 100.0)


@kernel
def value(rec, cfg, N, sc):
    """My standing (seat 0) less ALPHA times the leading opponent's.

    A seat's standing is -(VISIT * towns it still needs + moves to its next new
    town). The distance field E of a seat is the one computed for the decision's
    position (``sc.E``) unless the seat's visits changed, then it is recomputed.
    """
    locate(rec, cfg, N, sc.cr, sc.ci)
    me = 0.0
    lead = -BIG * 10
    for s in range(N):
        unv = unvisited(rec, cfg, s)
        if unv == 0:
            v = WIN
        else:
            left = 0
            for t in range(cfg.n_towns):
                left += (unv >> np.uint32(t)) & np.uint32(1)
            v = -sc.w[0] * left
            if sc.cr[s] >= 0:
                if unv == sc.unv[s]:
                    v -= car_cost(rec, cfg, unv, sc.cr[s], sc.ci[s], sc.E[s], sc.w[1])
                else:
                    dijkstra(rec, cfg, unv, sc.Et, sc.done)
                    v -= car_cost(rec, cfg, unv, sc.cr[s], sc.ci[s], sc.Et, sc.w[1])
        if s == 0:
            if v >= WIN:
                return WIN
            me = v
        elif v > lead:
            lead = v
    if lead >= WIN:
        return -WIN
    return me - sc.w[2] * lead
