"""Traffic Jam's legal actions (C3): ``is_legal`` for one action, ``legal_mask`` for all.

Only the player's own hand decides legality, so hidden choices never leak.
"""

from __future__ import annotations

import numpy as np

from trafficenvs.core.jit import kernel


@kernel
def is_legal(rec, cfg, action):
    if rec.over:
        return False
    K = cfg.num_kinds
    p = rec.cur
    if rec.stage == 0:
        return 0 <= action < K and rec.hand[p, action] > 0
    b = action - cfg.a_pair
    if b < 0 or b >= K * K:
        return False
    car = b // K
    sur = b - car * K
    if car == sur:
        return rec.hand[p, car] >= 2
    return rec.hand[p, car] >= 1 and rec.hand[p, sur] >= 1


@kernel
def legal_mask(rec, cfg, out):
    out[:] = 0
    if rec.over:
        return
    K = cfg.num_kinds
    hand = rec.hand[rec.cur]
    if rec.stage == 0:
        for k in range(K):
            if hand[k] > 0:
                out[k] = 1
        return
    # Stage 2: ordered pairs over the (at most 5) kinds in hand, listed once.
    held = rec.scratch
    n = 0
    for k in range(K):
        if hand[k] > 0:
            held[n] = k
            n += 1
    for i in range(n):
        car = np.int64(held[i])
        base = cfg.a_pair + car * K
        for j in range(n):
            sur = np.int64(held[j])
            if sur != car or hand[car] >= 2:
                out[base + sur] = 1
