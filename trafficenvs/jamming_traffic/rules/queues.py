"""Roads as queues, visits and the win (J2, J5, J9).

``q[r, 0..cnt[r]-1]`` lists road ``r``'s cars from its end 0 to its end 1; a car
joins at the end it enters by, behind the cars already there (J5), and only the car
at an end leaves (J2). Passing a town visits it (J9); the first car to have visited
every town but its home wins at once.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel
from trafficenvs.core.rewards import write_zero_sum
from trafficenvs.jamming_traffic.rules.layout import OVER


@kernel
def take(rec, r, x):
    """Remove and return the car at end ``x`` of road ``r`` (J2); a held road left with
    3 cars is an ordinary road again (J8)."""
    n = rec.cnt[r]
    if x == 0:
        car = rec.q[r, 0]
        for i in range(n - 1):
            rec.q[r, i] = rec.q[r, i + 1]
    else:
        car = rec.q[r, n - 1]
    rec.q[r, n - 1] = -1
    rec.cnt[r] = n - 1
    if rec.held[r] and n - 1 <= 3:
        rec.held[r] = 0
    return car


@kernel
def put(rec, r, x, car):
    """A car joins road ``r`` at its end ``x``, behind the cars already there (J5); a
    held road that takes a car is no longer held (it jams again, J8)."""
    n = rec.cnt[r]
    if x == 0:
        for i in range(n, 0, -1):
            rec.q[r, i] = rec.q[r, i - 1]
        rec.q[r, 0] = car
    else:
        rec.q[r, n] = car
    rec.cnt[r] = n + 1
    rec.laste[r] = x
    rec.held[r] = 0
    rec.car_road[car] = r  # the players' cars' index (no branch: a neutral car
    rec.car_road[0] = -1  # writes entry 0, which stays -1)


@kernel
def needed_towns(rec, cfg, p):
    """The town set seat ``p`` must pass to win (J9): every town but its home.

    Public: the greedy player's race estimate counts the towns a seat still needs.
    """
    return cfg.all_towns & ~(np.uint32(1) << np.uint32(rec.home[p]))


@kernel
def popcount(x):
    """Number of set bits of a value below 2**32 (uint64 arithmetic): a town set's size."""
    U = np.uint64
    x = x - ((x >> U(1)) & U(0x55555555))
    x = (x & U(0x33333333)) + ((x >> U(2)) & U(0x33333333))
    x = (x + (x >> U(4))) & U(0x0F0F0F0F)
    return ((x * U(0x01010101)) >> U(24)) & U(0xFF)


@kernel
def visit(rec, cfg, car, t):
    """Car ``car`` passes through town ``t`` (J9); True if that wins the game.

    With ``shaping``, a town its owner still needed is worth 1 to that owner (C2).
    """
    if car <= 0:
        return False
    p = car - 1
    bit = np.uint32(1) << np.uint32(t)
    need = needed_towns(rec, cfg, p)
    if cfg.shaping and (need & ~rec.visited[p] & bit):
        rec.reward[p] += 1.0
    rec.visited[p] |= bit
    if rec.visited[p] & need == need:
        win(rec, cfg, p)
        return True
    return False


@kernel
def win(rec, cfg, p):
    """Seat ``p`` wins: the game is over, zero-sum result (J9, C2)."""
    N = cfg.num_players
    for j in range(N):
        rec.winner[j] = 1 if j == p else 0
    rec.phase = OVER
    write_zero_sum(rec.reward, rec.winner, N)
