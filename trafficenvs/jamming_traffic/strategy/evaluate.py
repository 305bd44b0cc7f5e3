"""Jamming Traffic's ``evaluate`` verb: who is ahead in the race, for search cut-offs.

A search agent that stops a rollout before someone has visited every town needs a
value for the position. This one is the greedy player's race estimate made
symmetric: each seat's *standing* is ``-(VISIT * towns it still has to visit +
moves its car needs to pass its next new town)`` (``estimate.py``: the moves
are counted on the queues and a Dijkstra field over the map), and the standings
become win chances by a softmax with temperature :data:`TEMPERATURE` moves. The
value of seat ``j`` is then C2's expected result, ``n/(n-1) * (p_j - 1/n)``: +1 for a
certain lone winner, -1/(n-1) for a certain loser, and the values sum to zero like
the game's results. The whole position is open, so nothing hidden is read.
"""

from __future__ import annotations

import math

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.jamming_traffic.rules.layout import MAX_TOWNS
from trafficenvs.jamming_traffic.strategy.estimate import (
    BIG,
    OPP_BLOCK,
    VISIT,
    car_cost,
    dijkstra,
    unvisited,
)

#: moves of standing that multiply a seat's win chance by e (a town still to visit
#: weighs VISIT = 12 moves: one town ahead is worth about 4.5 to 1)
TEMPERATURE = 8.0


@kernel
def standing(rec, cfg, s, E, done):
    """Seat ``s``'s race standing, ``-(VISIT * towns left + moves to the next new town)``
    (``E``, ``done``: scratch for the distance field, ``MAX_TOWNS`` entries each)."""
    unv = unvisited(rec, cfg, s)
    left = 0
    for t in range(cfg.n_towns):
        left += (unv >> np.uint32(t)) & np.uint32(1)
    if left == 0:
        return 0.0
    v = -VISIT * left
    c = s + 1
    r = rec.car_road[c]
    if r >= 0:
        ci = -1
        for k in range(rec.cnt[r]):
            if rec.q[r, k] == c:
                ci = k
        if ci >= 0:
            dijkstra(rec, cfg, unv, E, done)
            v -= car_cost(rec, cfg, unv, r, ci, E, OPP_BLOCK)
    return v


@kernel
def evaluate(rec, cfg, ret, scratch):
    """Add every seat's expected result (module docstring) to ``ret``; ``scratch``:
    a float64 row of at least ``2 * MAX_TOWNS + MAX_PLAYERS`` entries."""
    N = cfg.num_players
    E = scratch[:MAX_TOWNS]
    done = scratch[MAX_TOWNS:2 * MAX_TOWNS]
    st = scratch[2 * MAX_TOWNS:2 * MAX_TOWNS + N]
    top = -BIG
    for s in range(N):
        st[s] = standing(rec, cfg, s, E, done)
        top = max(top, st[s])
    z = 0.0
    for s in range(N):
        st[s] = math.exp((st[s] - top) / TEMPERATURE)
        z += st[s]
    for s in range(N):
        ret[s] += N / (N - 1.0) * (st[s] / z - 1.0 / N)
